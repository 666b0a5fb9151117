"""Knowledge-base folders and collection tags as FastGPT keeps them.

- ``dataset_tags``: a knowledge base's tags (FastGPT's ``dataset_collection_tags``: an id and a name per
  tag, one name once per knowledge base), filled from the tag names collections already carry;
- ``ix_datasets_parent`` and ``ix_collections_parent``: listing a folder's children (``parent_id`` has
  been on both tables since the first schema).

Revision ID: 0018
Revises: 0020
Create Date: 2026-12-03
"""

from __future__ import annotations

import json
import secrets
import time
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0020"
branch_labels = None
depends_on = None


def _object_id() -> str:
    return f"{int(time.time()):08x}{secrets.token_hex(8)}"


def _names(value: Any) -> list[str]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return []
    return [str(tag) for tag in value or () if isinstance(tag, str) and tag]


def upgrade() -> None:
    tags = op.create_table(
        "dataset_tags",
        sa.Column("id", sa.String(24), nullable=False),
        sa.Column("team_id", sa.String(24), nullable=False),
        sa.Column("dataset_id", sa.String(24), nullable=False),
        sa.Column("tag", sa.String(100), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["team_id"], ["teams.id"], name=op.f("fk_dataset_tags_team_id_teams"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["dataset_id"],
            ["datasets.id"],
            name=op.f("fk_dataset_tags_dataset_id_datasets"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_dataset_tags")),
        sa.UniqueConstraint("dataset_id", "tag", name=op.f("uq_dataset_tags_dataset_id")),
    )
    op.create_index("ix_datasets_parent", "datasets", ["team_id", "parent_id"])
    op.create_index("ix_collections_parent", "collections", ["dataset_id", "parent_id"])
    rows = op.get_bind().execute(sa.text("SELECT team_id, dataset_id, tags FROM collections")).fetchall()
    seen: set[tuple[str, str]] = set()
    now = datetime.now(UTC)
    backfill = []
    for team_id, dataset_id, value in rows:
        for name in _names(value):
            if (dataset_id, name) not in seen:
                seen.add((dataset_id, name))
                backfill.append(
                    {
                        "id": _object_id(),
                        "team_id": team_id,
                        "dataset_id": dataset_id,
                        "tag": name[:100],
                        "created_at": now,
                    }
                )
    if backfill:
        op.bulk_insert(tags, backfill)


def downgrade() -> None:
    op.drop_index("ix_collections_parent", table_name="collections")
    op.drop_index("ix_datasets_parent", table_name="datasets")
    op.drop_table("dataset_tags")
