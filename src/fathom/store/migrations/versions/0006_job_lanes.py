"""fair job queue: ``jobs.lane`` (the knowledge base a job works on) and ``jobs.claimed_at``

Workers take jobs round-robin across lanes (the lane with the fewest running jobs, then the one served
least recently), so a one-line import into one knowledge base does not wait behind a large import into
another. Jobs written before this migration have no lane and keep their order.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("lane", sa.String(64), nullable=True))
    op.add_column("jobs", sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index("ix_jobs_lane_claimed", "jobs", ["lane", "claimed_at"])
    op.create_index("ix_jobs_lane_status", "jobs", ["lane", "status"])


def downgrade() -> None:
    op.drop_index("ix_jobs_lane_status", table_name="jobs")
    op.drop_index("ix_jobs_lane_claimed", table_name="jobs")
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("claimed_at")
        batch.drop_column("lane")
