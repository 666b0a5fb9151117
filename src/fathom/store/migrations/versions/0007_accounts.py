"""accounts: ``users`` (argon2 password hashes, one per member), ``user_sessions`` (console sign-ins),
``invitations`` (one-use join links with a role and an expiry) and ``sign_in_failures`` (the sign-in rate
limit, counted in the database so it holds across replicas)

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

_AT = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("member_id", sa.String(length=24), nullable=False),
        sa.Column("username", sa.String(length=64), nullable=False),
        sa.Column("password_hash", sa.String(length=200), nullable=False),
        sa.Column("password_changed_at", _AT, nullable=False),
        sa.Column("created_at", _AT, nullable=False),
        sa.ForeignKeyConstraint(
            ["member_id"], ["members.id"], name=op.f("fk_users_member_id_members"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_users")),
        sa.UniqueConstraint("member_id", name=op.f("uq_users_member_id")),
        sa.UniqueConstraint("username", name=op.f("uq_users_username")),
    )
    op.create_table(
        "user_sessions",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("user_id", sa.String(length=24), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("csrf_token", sa.String(length=64), nullable=False),
        sa.Column("client_ip", sa.String(length=64), nullable=False),
        sa.Column("expires_at", _AT, nullable=False),
        sa.Column("created_at", _AT, nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_user_sessions_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_user_sessions")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_user_sessions_token_hash")),
    )
    with op.batch_alter_table("user_sessions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_user_sessions_user_id"), ["user_id"], unique=False)
    op.create_table(
        "invitations",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("team_id", sa.String(length=24), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_by", sa.String(length=24), nullable=True),
        sa.Column("expires_at", _AT, nullable=False),
        sa.Column("used_at", _AT, nullable=True),
        sa.Column("used_by", sa.String(length=24), nullable=True),
        sa.Column("created_at", _AT, nullable=False),
        sa.ForeignKeyConstraint(
            ["team_id"], ["teams.id"], name=op.f("fk_invitations_team_id_teams"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_invitations")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_invitations_token_hash")),
    )
    with op.batch_alter_table("invitations", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_invitations_team_id"), ["team_id"], unique=False)
    op.create_table(
        "sign_in_failures",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("scope", sa.String(length=8), nullable=False),
        sa.Column("key", sa.String(length=128), nullable=False),
        sa.Column("created_at", _AT, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sign_in_failures")),
    )
    with op.batch_alter_table("sign_in_failures", schema=None) as batch_op:
        batch_op.create_index(
            "ix_sign_in_failures_scope_key_at", ["scope", "key", "created_at"], unique=False
        )


def downgrade() -> None:
    op.drop_table("sign_in_failures")
    op.drop_table("invitations")
    op.drop_table("user_sessions")
    op.drop_table("users")
