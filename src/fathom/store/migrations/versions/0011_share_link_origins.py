"""share links: ``share_links.allowed_origins`` (the sites whose pages may show a link's share page in a
frame, Fathom's addition to FastGPT's outLink; none: only Fathom's own pages)

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("share_links", schema=None) as batch_op:
        batch_op.add_column(sa.Column("allowed_origins", sa.JSON(), nullable=False, server_default="[]"))


def downgrade() -> None:
    with op.batch_alter_table("share_links", schema=None) as batch_op:
        batch_op.drop_column("allowed_origins")
