"""upload limits: ``upload_hits`` (each caller's uploads of the last minute, so the per-caller upload
limit holds across replicas), indexes on ``stored_files`` (team, app, chat: a chat's files go with it;
sha256: a shared copy goes with its last row), and the app and chat of every chat file stored before
(read from its key ``chat/app/{appId}/{uid}/{chatId}/{fileId}-{name}``)

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "upload_hits",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("caller", sa.String(length=320), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_upload_hits")),
    )
    with op.batch_alter_table("upload_hits", schema=None) as batch_op:
        batch_op.create_index("ix_upload_hits_caller_at", ["caller", "created_at"], unique=False)
    with op.batch_alter_table("stored_files", schema=None) as batch_op:
        batch_op.create_index("ix_stored_files_chat", ["team_id", "app_id", "chat_id"], unique=False)
        batch_op.create_index("ix_stored_files_sha256", ["sha256"], unique=False)
    files = sa.table(
        "stored_files",
        sa.column("id", sa.String),
        sa.column("bucket", sa.String),
        sa.column("name", sa.String),
        sa.column("app_id", sa.String),
        sa.column("chat_id", sa.String),
    )
    bind = op.get_bind()
    rows = bind.execute(
        sa.select(files.c.id, files.c.name).where(files.c.bucket == "chat", files.c.app_id.is_(None))
    ).all()
    for file_id, name in rows:
        parts = str(name).split("/")
        if len(parts) >= 6 and parts[:2] == ["chat", "app"]:
            bind.execute(
                files.update().where(files.c.id == file_id).values(app_id=parts[2][:24], chat_id=parts[4])
            )


def downgrade() -> None:
    with op.batch_alter_table("stored_files", schema=None) as batch_op:
        batch_op.drop_index("ix_stored_files_sha256")
        batch_op.drop_index("ix_stored_files_chat")
    with op.batch_alter_table("upload_hits", schema=None) as batch_op:
        batch_op.drop_index("ix_upload_hits_caller_at")
    op.drop_table("upload_hits")
