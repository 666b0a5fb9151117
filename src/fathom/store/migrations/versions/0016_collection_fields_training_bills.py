"""The collection fields FastGPT's ``collection/update`` and the import routes carry, and training bills.

- ``collections.external_file_id`` (a client's own id for the file, FastGPT's ``externalFileId``; a
  collection can be updated by ``datasetId`` + ``externalFileId``), ``collections.tags`` (a JSON list of
  tag names) and ``collections.forbid`` (a forbidden collection is left out of every search);
- ``training_bills``: what ``support/wallet/usage/createTrainingUsage`` makes (its id is the ``billId``
  that ``pushData`` and the imports accept), and ``usage_records.bill_id``: the bill a training's usage
  record belongs to, so usage reports group by it.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("collections", sa.Column("external_file_id", sa.String(200), nullable=True))
    op.add_column("collections", sa.Column("tags", sa.JSON(), nullable=False, server_default="[]"))
    op.add_column("collections", sa.Column("forbid", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.create_index("ix_collections_external_file", "collections", ["dataset_id", "external_file_id"])
    op.create_table(
        "training_bills",
        sa.Column("id", sa.String(24), nullable=False),
        sa.Column("team_id", sa.String(24), nullable=False),
        sa.Column("dataset_id", sa.String(24), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("member_id", sa.String(24), nullable=True),
        sa.Column("api_key_id", sa.String(24), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["team_id"], ["teams.id"], name=op.f("fk_training_bills_team_id_teams"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_training_bills")),
    )
    op.create_index(op.f("ix_training_bills_team_id"), "training_bills", ["team_id"])
    op.add_column("usage_records", sa.Column("bill_id", sa.String(24), nullable=True))
    op.create_index(op.f("ix_usage_records_bill_id"), "usage_records", ["bill_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_usage_records_bill_id"), table_name="usage_records")
    with op.batch_alter_table("usage_records") as batch:
        batch.drop_column("bill_id")
    op.drop_index(op.f("ix_training_bills_team_id"), table_name="training_bills")
    op.drop_table("training_bills")
    op.drop_index("ix_collections_external_file", table_name="collections")
    with op.batch_alter_table("collections") as batch:
        batch.drop_column("forbid")
        batch.drop_column("tags")
        batch.drop_column("external_file_id")
