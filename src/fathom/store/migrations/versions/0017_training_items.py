"""Model-made training: ``training_items``, the chunks waiting for the dataset's model (FastGPT's
``dataset_trainings``), in mode ``qa`` (question/answer pairs) or ``auto`` (extra index texts). An item is
deleted in the transaction that writes what the model made of it; one the model kept failing on stays
with its ``error`` until it is retried.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "training_items",
        sa.Column("id", sa.String(24), nullable=False),
        sa.Column("team_id", sa.String(24), nullable=False),
        sa.Column("dataset_id", sa.String(24), nullable=False),
        sa.Column("collection_id", sa.String(24), nullable=False),
        sa.Column("mode", sa.String(16), nullable=False),
        sa.Column("chunk_index", sa.Integer(), nullable=False),
        sa.Column("q", sa.Text(), nullable=False),
        sa.Column("a", sa.Text(), nullable=False),
        sa.Column("prompt", sa.Text(), nullable=True),
        sa.Column("bill_id", sa.String(24), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["team_id"], ["teams.id"], name=op.f("fk_training_items_team_id_teams"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["dataset_id"],
            ["datasets.id"],
            name=op.f("fk_training_items_dataset_id_datasets"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["collection_id"],
            ["collections.id"],
            name=op.f("fk_training_items_collection_id_collections"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_training_items")),
    )
    op.create_index(op.f("ix_training_items_team_id"), "training_items", ["team_id"])
    op.create_index(op.f("ix_training_items_dataset_id"), "training_items", ["dataset_id"])
    op.create_index("ix_training_items_collection", "training_items", ["collection_id", "chunk_index"])


def downgrade() -> None:
    op.drop_index("ix_training_items_collection", table_name="training_items")
    op.drop_index(op.f("ix_training_items_dataset_id"), table_name="training_items")
    op.drop_index(op.f("ix_training_items_team_id"), table_name="training_items")
    op.drop_table("training_items")
