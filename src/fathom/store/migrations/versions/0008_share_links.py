"""share links: ``share_links`` (FastGPT's outLink: per-link name, what visitors see, expiry, QPM, max
points, auth hook URL and the points spent), ``share_link_hits`` (each visitor's answered requests of the
last minute, so QPM holds across replicas) and ``chats.share_id`` / ``chats.out_link_uid`` (whose chat
it is: a visitor lists only their own)

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

_AT = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "share_links",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("share_id", sa.String(length=32), nullable=False),
        sa.Column("team_id", sa.String(length=24), nullable=False),
        sa.Column("app_id", sa.String(length=24), nullable=False),
        sa.Column("member_id", sa.String(length=24), nullable=False),
        sa.Column("type", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("response_detail", sa.Boolean(), nullable=False),
        sa.Column("show_node_status", sa.Boolean(), nullable=False),
        sa.Column("show_raw_source", sa.Boolean(), nullable=False),
        sa.Column("expired_time", _AT, nullable=True),
        sa.Column("qpm", sa.Integer(), nullable=False),
        sa.Column("max_usage_points", sa.Float(), nullable=False),
        sa.Column("hook_url", sa.String(length=2000), nullable=False),
        sa.Column("usage_points", sa.Float(), nullable=False),
        sa.Column("last_time", _AT, nullable=True),
        sa.Column("created_at", _AT, nullable=False),
        sa.ForeignKeyConstraint(
            ["app_id"], ["apps.id"], name=op.f("fk_share_links_app_id_apps"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["team_id"], ["teams.id"], name=op.f("fk_share_links_team_id_teams"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_share_links")),
        sa.UniqueConstraint("share_id", name=op.f("uq_share_links_share_id")),
    )
    with op.batch_alter_table("share_links", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_share_links_app_id"), ["app_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_share_links_team_id"), ["team_id"], unique=False)
    op.create_table(
        "share_link_hits",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("link_id", sa.String(length=24), nullable=False),
        sa.Column("out_link_uid", sa.String(length=255), nullable=False),
        sa.Column("created_at", _AT, nullable=False),
        sa.ForeignKeyConstraint(
            ["link_id"],
            ["share_links.id"],
            name=op.f("fk_share_link_hits_link_id_share_links"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_share_link_hits")),
    )
    with op.batch_alter_table("share_link_hits", schema=None) as batch_op:
        batch_op.create_index(
            "ix_share_link_hits_link_uid_at", ["link_id", "out_link_uid", "created_at"], unique=False
        )
    with op.batch_alter_table("chats", schema=None) as batch_op:
        batch_op.add_column(sa.Column("share_id", sa.String(length=32), nullable=True))
        batch_op.add_column(sa.Column("out_link_uid", sa.String(length=255), nullable=True))
        batch_op.create_index("ix_chats_share", ["app_id", "share_id", "out_link_uid"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("chats", schema=None) as batch_op:
        batch_op.drop_index("ix_chats_share")
        batch_op.drop_column("out_link_uid")
        batch_op.drop_column("share_id")
    op.drop_table("share_link_hits")
    op.drop_table("share_links")
