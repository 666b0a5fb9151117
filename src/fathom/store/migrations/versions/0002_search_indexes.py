"""search indexes: FTS5 (SQLite) or tsvector + GIN and a pgvector column (PostgreSQL)

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""

from __future__ import annotations

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        # One row per chunk (q + a), segmented (jieba for Chinese) and lower-cased before it is written.
        op.execute(
            "CREATE VIRTUAL TABLE data_fts USING fts5("
            "text, data_id UNINDEXED, dataset_id UNINDEXED, collection_id UNINDEXED, "
            "tokenize='unicode61 remove_diacritics 2')"
        )
        return
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")
    op.execute(
        "CREATE TABLE data_fts ("
        "data_id varchar(24) PRIMARY KEY, "
        "dataset_id varchar(24) NOT NULL, collection_id varchar(24) NOT NULL, "
        "tsv tsvector NOT NULL)"
    )
    op.execute("CREATE INDEX ix_data_fts_tsv ON data_fts USING gin (tsv)")
    op.execute("CREATE INDEX ix_data_fts_dataset ON data_fts (dataset_id)")
    op.execute("CREATE INDEX ix_data_fts_collection ON data_fts (collection_id)")
    # Vectors of any dimension; HNSW indexes are created per dimension on first use
    # (``CREATE INDEX … ((embedding::vector(N))) WHERE dims = N``).
    op.execute("ALTER TABLE data_indexes ADD COLUMN embedding vector")


def downgrade() -> None:
    op.execute("DROP TABLE IF EXISTS data_fts")
    if op.get_bind().dialect.name != "sqlite":
        op.execute("ALTER TABLE data_indexes DROP COLUMN IF EXISTS embedding")
