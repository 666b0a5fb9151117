"""sign-in lock-out that holds under concurrency: ``sign_in_attempts`` (one counter row per username and
per client IP, incremented and read back in one statement) replaces ``sign_in_failures`` (a row per
failure, counted before the next was recorded, so parallel guesses all passed the check). The old rows
only throttled guessing for 15 minutes; they are dropped, not carried over.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

_AT = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "sign_in_attempts",
        sa.Column("scope", sa.String(length=8), nullable=False),
        sa.Column("key", sa.String(length=128), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.Column("window_started_at", _AT, nullable=False),
        sa.PrimaryKeyConstraint("scope", "key", name=op.f("pk_sign_in_attempts")),
    )
    op.create_index("ix_sign_in_attempts_window_started_at", "sign_in_attempts", ["window_started_at"])
    op.drop_table("sign_in_failures")


def downgrade() -> None:
    op.create_table(
        "sign_in_failures",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("scope", sa.String(length=8), nullable=False),
        sa.Column("key", sa.String(length=128), nullable=False),
        sa.Column("created_at", _AT, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sign_in_failures")),
    )
    op.create_index(
        "ix_sign_in_failures_scope_key_at", "sign_in_failures", ["scope", "key", "created_at"], unique=False
    )
    op.drop_index("ix_sign_in_attempts_window_started_at", table_name="sign_in_attempts")
    op.drop_table("sign_in_attempts")
