"""A chat turn is stored when its run starts: the AI item's run state.

- ``chat_items.status``: ``running`` while the run that writes the AI item goes on (stored with the
  Human item when the run starts), NULL once the run finished it (the answer replaced in one statement);
- ``chat_items.heartbeat_at``: refreshed by the replica running the item; a ``running`` item whose
  heartbeat is older than the chat lease (``FATHOM_CHAT_LEASE_SECONDS``) lost its replica and reads as
  interrupted.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("chat_items", sa.Column("status", sa.String(16), nullable=True))
    op.add_column("chat_items", sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("chat_items") as batch:
        batch.drop_column("heartbeat_at")
        batch.drop_column("status")
