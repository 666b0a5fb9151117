"""job lease expiries: ``jobs.lease_expiries`` counts the runs whose worker died (its lease lapsed)

A worker crash no longer uses up one of the job's ``attempts`` (which count only the job's own failures);
this separate counter, bounded much higher, still stops a job that kills every worker that runs it.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("lease_expiries", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("lease_expiries")
