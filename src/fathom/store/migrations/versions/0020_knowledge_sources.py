"""Knowledge that stays current: external sources of knowledge bases and their syncs.

- ``knowledge_sources``: a knowledge base's API file library (FastGPT's ``apiServer``, the authorization
  encrypted) or website (start URL, selector, prefix, limits), and its ``autoSync`` schedule;
- ``collection_sources``: the page URL or API file id a collection was made from and the hash of the text
  its chunks hold (a re-sync of unchanged text costs nothing);
- ``source_syncs``: each sync run (queued, running, done, failed) with its counts and failures.

Revision ID: 0020
Revises: 0021
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

_AT = sa.DateTime(timezone=True)

revision = "0020"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "knowledge_sources",
        sa.Column("dataset_id", sa.String(24), nullable=False),
        sa.Column("team_id", sa.String(24), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("secret", sa.Text(), nullable=True),
        sa.Column("auto_sync", sa.Boolean(), nullable=False),
        sa.Column("sync_interval_seconds", sa.Integer(), nullable=False),
        sa.Column("next_sync_at", _AT, nullable=True),
        sa.Column("created_at", _AT, nullable=False),
        sa.Column("updated_at", _AT, nullable=False),
        sa.ForeignKeyConstraint(
            ["dataset_id"],
            ["datasets.id"],
            name=op.f("fk_knowledge_sources_dataset_id_datasets"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["team_id"], ["teams.id"], name=op.f("fk_knowledge_sources_team_id_teams"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("dataset_id", name=op.f("pk_knowledge_sources")),
    )
    op.create_index(op.f("ix_knowledge_sources_team_id"), "knowledge_sources", ["team_id"])
    op.create_index("ix_knowledge_sources_due", "knowledge_sources", ["auto_sync", "next_sync_at"])
    op.create_table(
        "collection_sources",
        sa.Column("collection_id", sa.String(24), nullable=False),
        sa.Column("dataset_id", sa.String(24), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("ref", sa.Text(), nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=True),
        sa.Column("synced_at", _AT, nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["collection_id"],
            ["collections.id"],
            name=op.f("fk_collection_sources_collection_id_collections"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["dataset_id"],
            ["datasets.id"],
            name=op.f("fk_collection_sources_dataset_id_datasets"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("collection_id", name=op.f("pk_collection_sources")),
    )
    op.create_index(op.f("ix_collection_sources_dataset_id"), "collection_sources", ["dataset_id"])
    op.create_table(
        "source_syncs",
        sa.Column("id", sa.String(24), nullable=False),
        sa.Column("team_id", sa.String(24), nullable=False),
        sa.Column("dataset_id", sa.String(24), nullable=False),
        sa.Column("collection_id", sa.String(24), nullable=True),
        sa.Column("trigger", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("counts", sa.JSON(), nullable=False),
        sa.Column("failures", sa.JSON(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("created_at", _AT, nullable=False),
        sa.Column("started_at", _AT, nullable=True),
        sa.Column("finished_at", _AT, nullable=True),
        sa.ForeignKeyConstraint(
            ["dataset_id"],
            ["datasets.id"],
            name=op.f("fk_source_syncs_dataset_id_datasets"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["team_id"], ["teams.id"], name=op.f("fk_source_syncs_team_id_teams"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_source_syncs")),
    )
    op.create_index(op.f("ix_source_syncs_team_id"), "source_syncs", ["team_id"])
    op.create_index("ix_source_syncs_dataset_created", "source_syncs", ["dataset_id", "created_at"])


def downgrade() -> None:
    op.drop_table("source_syncs")
    op.drop_table("collection_sources")
    op.drop_table("knowledge_sources")
