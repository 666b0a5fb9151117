"""Image indexes: ``datasets.vlm_model``, the vision model (FastGPT's ``vlmModel``) that describes the
images of a knowledge base's imports (``imageIndex``) and its image collections. Empty: none chosen (the
first configured model with ``vision: true`` is used).

Revision ID: 0022
Revises: 0019
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0022"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "datasets", sa.Column("vlm_model", sa.String(length=200), nullable=False, server_default="")
    )


def downgrade() -> None:
    with op.batch_alter_table("datasets") as batch:
        batch.drop_column("vlm_model")
