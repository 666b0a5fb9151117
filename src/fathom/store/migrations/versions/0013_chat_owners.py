"""Every chat has an owner (``fathom.chat.ownership``): ``chats.owner_kind`` (``member``, ``key`` or
``visitor``) and ``chats.api_key_id`` (the key that owns a key's chat), with an index for each caller's
own history list.

Backfill of chats made before: a chat with a ``share_id`` is its visitor's; a chat from the API (source
``api``) is a key's, but which key was never recorded, so ``api_key_id`` stays NULL: no key owns it and
only the app's managers (chat logs) reach it, rather than the member who created the key; every other
chat (console, chat test) is its member's.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("chats", sa.Column("owner_kind", sa.String(16), nullable=False, server_default="member"))
    op.add_column("chats", sa.Column("api_key_id", sa.String(24), nullable=True))
    op.execute("UPDATE chats SET owner_kind = 'visitor' WHERE share_id IS NOT NULL")
    op.execute("UPDATE chats SET owner_kind = 'key' WHERE share_id IS NULL AND source = 'api'")
    op.create_index("ix_chats_owner", "chats", ["app_id", "owner_kind", "member_id", "api_key_id"])


def downgrade() -> None:
    op.drop_index("ix_chats_owner", table_name="chats")
    with op.batch_alter_table("chats") as batch:
        batch.drop_column("api_key_id")
        batch.drop_column("owner_kind")
