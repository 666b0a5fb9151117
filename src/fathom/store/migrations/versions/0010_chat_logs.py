"""chat logs: ``chat_items.admin_feedback`` (the owner's mark on an answer and the corrected answer,
FastGPT's ``adminFeedback``) and an index on ``chats (app_id, updated_at)`` for an app's logs by date

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("chat_items", sa.Column("admin_feedback", sa.JSON(), nullable=True))
    op.create_index("ix_chats_app_updated", "chats", ["app_id", "updated_at"])


def downgrade() -> None:
    op.drop_index("ix_chats_app_updated", table_name="chats")
    with op.batch_alter_table("chat_items") as batch:
        batch.drop_column("admin_feedback")
