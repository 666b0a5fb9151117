"""``vectorModel: "auto"``: ``datasets.auto_model_pending`` (the model is still the create-time guess, the
first import decides) and ``datasets.auto_model_reason`` (why auto chose the model it did, shown in the
dataset's detail). Both NULL for a dataset created with a named model.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("datasets", sa.Column("auto_model_pending", sa.Boolean(), nullable=True))
    op.add_column("datasets", sa.Column("auto_model_reason", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("datasets") as batch:
        batch.drop_column("auto_model_reason")
        batch.drop_column("auto_model_pending")
