"""job priority: ``jobs.priority`` (0 normal; lower waits behind every higher one)

Workers claim the job of the highest priority first, then by the fair order (team, lane, age). The
first-start demo knowledge base is queued below normal, so a user's own imports are never stuck behind
it. Jobs written before this migration are normal.

Revision ID: 0021
Revises: 0017
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("priority", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("priority")
