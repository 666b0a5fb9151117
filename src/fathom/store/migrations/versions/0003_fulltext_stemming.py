"""full text: English stemming on both backends; SQLite gets a narrow row table for scope filters

SQLite: ``data_fts`` becomes an FTS5 table of the segmented text alone, tokenized by ``porter unicode61``
(English words stemmed, every other script as before); its rowid is the id of a row in the ordinary table
``data_fts_rows`` (data, dataset and collection ids, indexed). A search joins the two, so the scope check
reads a small B-tree row instead of the FTS content row, and deletes find their rows by index instead of
scanning the FTS content. PostgreSQL: ``tsv`` is rebuilt with the ``english`` configuration (stemming and
stop words) from its own lexemes in position order.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29
"""

from __future__ import annotations

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_REBUILD_TSV = (
    "UPDATE data_fts SET tsv = to_tsvector('{config}', coalesce(("
    "SELECT string_agg(u.lexeme, ' ' ORDER BY p.pos) "
    "FROM unnest(data_fts.tsv) AS u(lexeme, positions, weights), unnest(u.positions) AS p(pos)"
    "), ''))"
)


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        op.execute(_REBUILD_TSV.format(config="english"))
        return
    op.execute(
        "CREATE TABLE data_fts_rows ("
        "id INTEGER PRIMARY KEY, data_id VARCHAR(24) NOT NULL, "
        "dataset_id VARCHAR(24) NOT NULL, collection_id VARCHAR(24) NOT NULL)"
    )
    op.execute("CREATE UNIQUE INDEX ix_data_fts_rows_data ON data_fts_rows (data_id)")
    op.execute("CREATE INDEX ix_data_fts_rows_collection ON data_fts_rows (collection_id)")
    op.execute(
        "INSERT INTO data_fts_rows (id, data_id, dataset_id, collection_id) "
        "SELECT rowid, data_id, dataset_id, collection_id FROM data_fts"
    )
    op.execute("ALTER TABLE data_fts RENAME TO data_fts_old")
    op.execute(
        "CREATE VIRTUAL TABLE data_fts USING fts5(text, tokenize='porter unicode61 remove_diacritics 2')"
    )
    op.execute("INSERT INTO data_fts (rowid, text) SELECT rowid, text FROM data_fts_old")
    op.execute("DROP TABLE data_fts_old")


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        op.execute(_REBUILD_TSV.format(config="simple"))
        return
    op.execute("ALTER TABLE data_fts RENAME TO data_fts_new")
    op.execute(
        "CREATE VIRTUAL TABLE data_fts USING fts5("
        "text, data_id UNINDEXED, dataset_id UNINDEXED, collection_id UNINDEXED, "
        "tokenize='unicode61 remove_diacritics 2')"
    )
    op.execute(
        "INSERT INTO data_fts (rowid, text, data_id, dataset_id, collection_id) "
        "SELECT f.rowid, f.text, r.data_id, r.dataset_id, r.collection_id "
        "FROM data_fts_new f JOIN data_fts_rows r ON r.id = f.rowid"
    )
    op.execute("DROP TABLE data_fts_new")
    op.execute("DROP TABLE data_fts_rows")
