"""chunk token counts: ``data_chunks.tokens`` (cl100k tokens of q + a, counted when the chunk is written)

A search's token budget reads it instead of tokenizing every recalled chunk again (FastGPT keeps the same
``tokens`` on its data). Rows written before this migration hold NULL and are counted at search time.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("data_chunks", sa.Column("tokens", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("data_chunks") as batch:
        batch.drop_column("tokens")
