"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-29 20:16:22.347519
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:

    op.create_table(
        "jobs",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("team_id", sa.String(length=24), nullable=True),
        sa.Column("kind", sa.String(length=64), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("max_attempts", sa.Integer(), nullable=False),
        sa.Column("run_after", sa.DateTime(timezone=True), nullable=False),
        sa.Column("lease_owner", sa.String(length=100), nullable=True),
        sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("result", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_jobs")),
    )
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.create_index("ix_jobs_claim", ["status", "run_after"], unique=False)
        batch_op.create_index(batch_op.f("ix_jobs_team_id"), ["team_id"], unique=False)

    op.create_table(
        "teams",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_teams")),
    )
    op.create_table(
        "apps",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("team_id", sa.String(length=24), nullable=False),
        sa.Column("member_id", sa.String(length=24), nullable=True),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("type", sa.String(length=32), nullable=False),
        sa.Column("intro", sa.Text(), nullable=False),
        sa.Column("avatar", sa.String(length=500), nullable=False),
        sa.Column("draft", sa.JSON(), nullable=False),
        sa.Column("published_version_id", sa.String(length=24), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["team_id"], ["teams.id"], name=op.f("fk_apps_team_id_teams"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_apps")),
    )
    with op.batch_alter_table("apps", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_apps_team_id"), ["team_id"], unique=False)

    op.create_table(
        "datasets",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("team_id", sa.String(length=24), nullable=False),
        sa.Column("member_id", sa.String(length=24), nullable=True),
        sa.Column("parent_id", sa.String(length=24), nullable=True),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("intro", sa.Text(), nullable=False),
        sa.Column("type", sa.String(length=32), nullable=False),
        sa.Column("vector_model", sa.String(length=200), nullable=False),
        sa.Column("agent_model", sa.String(length=200), nullable=False),
        sa.Column("chunk_settings", sa.JSON(), nullable=False),
        sa.Column("index_version", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["team_id"], ["teams.id"], name=op.f("fk_datasets_team_id_teams"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_datasets")),
    )
    with op.batch_alter_table("datasets", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_datasets_team_id"), ["team_id"], unique=False)

    op.create_table(
        "members",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("team_id", sa.String(length=24), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["team_id"], ["teams.id"], name=op.f("fk_members_team_id_teams"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_members")),
        sa.UniqueConstraint("team_id", "name", name=op.f("uq_members_team_id")),
    )
    with op.batch_alter_table("members", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_members_team_id"), ["team_id"], unique=False)

    op.create_table(
        "stored_files",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("team_id", sa.String(length=24), nullable=False),
        sa.Column("member_id", sa.String(length=24), nullable=True),
        sa.Column("app_id", sa.String(length=24), nullable=True),
        sa.Column("chat_id", sa.String(length=1024), nullable=True),
        sa.Column("bucket", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=500), nullable=False),
        sa.Column("content_type", sa.String(length=200), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("storage_key", sa.String(length=500), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["team_id"], ["teams.id"], name=op.f("fk_stored_files_team_id_teams"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_stored_files")),
    )
    with op.batch_alter_table("stored_files", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_stored_files_team_id"), ["team_id"], unique=False)

    op.create_table(
        "usage_records",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("team_id", sa.String(length=24), nullable=False),
        sa.Column("app_id", sa.String(length=24), nullable=True),
        sa.Column("api_key_id", sa.String(length=24), nullable=True),
        sa.Column("source", sa.String(length=32), nullable=False),
        sa.Column("module_name", sa.String(length=200), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("input_tokens", sa.Integer(), nullable=False),
        sa.Column("output_tokens", sa.Integer(), nullable=False),
        sa.Column("total_points", sa.Float(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["team_id"], ["teams.id"], name=op.f("fk_usage_records_team_id_teams"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_usage_records")),
    )
    with op.batch_alter_table("usage_records", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_usage_records_app_id"), ["app_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_usage_records_team_id"), ["team_id"], unique=False)
        batch_op.create_index("ix_usage_team_time", ["team_id", "created_at"], unique=False)

    op.create_table(
        "api_keys",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("team_id", sa.String(length=24), nullable=False),
        sa.Column("member_id", sa.String(length=24), nullable=False),
        sa.Column("app_id", sa.String(length=24), nullable=True),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("key_hash", sa.String(length=64), nullable=False),
        sa.Column("prefix", sa.String(length=16), nullable=False),
        sa.Column("usage_points", sa.Float(), nullable=False),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["member_id"], ["members.id"], name=op.f("fk_api_keys_member_id_members"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["team_id"], ["teams.id"], name=op.f("fk_api_keys_team_id_teams"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_keys")),
        sa.UniqueConstraint("key_hash", name=op.f("uq_api_keys_key_hash")),
    )
    with op.batch_alter_table("api_keys", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_api_keys_member_id"), ["member_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_api_keys_team_id"), ["team_id"], unique=False)

    op.create_table(
        "app_versions",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("app_id", sa.String(length=24), nullable=False),
        sa.Column("team_id", sa.String(length=24), nullable=False),
        sa.Column("version_name", sa.String(length=200), nullable=False),
        sa.Column("nodes", sa.JSON(), nullable=False),
        sa.Column("edges", sa.JSON(), nullable=False),
        sa.Column("chat_config", sa.JSON(), nullable=False),
        sa.Column("is_publish", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["app_id"], ["apps.id"], name=op.f("fk_app_versions_app_id_apps"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["team_id"], ["teams.id"], name=op.f("fk_app_versions_team_id_teams"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_app_versions")),
    )
    with op.batch_alter_table("app_versions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_app_versions_app_id"), ["app_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_app_versions_team_id"), ["team_id"], unique=False)

    op.create_table(
        "chat_items",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("team_id", sa.String(length=24), nullable=False),
        sa.Column("app_id", sa.String(length=24), nullable=False),
        sa.Column("chat_id", sa.String(length=1024), nullable=False),
        sa.Column("data_id", sa.String(length=64), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("obj", sa.String(length=16), nullable=False),
        sa.Column("value", sa.JSON(), nullable=False),
        sa.Column("response_data", sa.JSON(), nullable=False),
        sa.Column("user_good_feedback", sa.Text(), nullable=True),
        sa.Column("user_bad_feedback", sa.Text(), nullable=True),
        sa.Column("duration_seconds", sa.Float(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["app_id"], ["apps.id"], name=op.f("fk_chat_items_app_id_apps"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["team_id"], ["teams.id"], name=op.f("fk_chat_items_team_id_teams"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_chat_items")),
        sa.UniqueConstraint("app_id", "chat_id", "data_id", name=op.f("uq_chat_items_app_id")),
    )
    with op.batch_alter_table("chat_items", schema=None) as batch_op:
        batch_op.create_index("ix_chat_items_chat", ["app_id", "chat_id", "seq"], unique=False)
        batch_op.create_index(batch_op.f("ix_chat_items_team_id"), ["team_id"], unique=False)

    op.create_table(
        "chats",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("chat_id", sa.String(length=1024), nullable=False),
        sa.Column("team_id", sa.String(length=24), nullable=False),
        sa.Column("app_id", sa.String(length=24), nullable=False),
        sa.Column("member_id", sa.String(length=24), nullable=True),
        sa.Column("title", sa.String(length=500), nullable=False),
        sa.Column("custom_title", sa.String(length=500), nullable=False),
        sa.Column("top", sa.Boolean(), nullable=False),
        sa.Column("source", sa.String(length=32), nullable=False),
        sa.Column("variables", sa.JSON(), nullable=False),
        sa.Column("metadata", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["app_id"], ["apps.id"], name=op.f("fk_chats_app_id_apps"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["team_id"], ["teams.id"], name=op.f("fk_chats_team_id_teams"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_chats")),
        sa.UniqueConstraint("app_id", "chat_id", name=op.f("uq_chats_app_id")),
    )
    with op.batch_alter_table("chats", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_chats_app_id"), ["app_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_chats_team_id"), ["team_id"], unique=False)

    op.create_table(
        "collections",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("team_id", sa.String(length=24), nullable=False),
        sa.Column("dataset_id", sa.String(length=24), nullable=False),
        sa.Column("parent_id", sa.String(length=24), nullable=True),
        sa.Column("name", sa.String(length=500), nullable=False),
        sa.Column("type", sa.String(length=32), nullable=False),
        sa.Column("file_id", sa.String(length=24), nullable=True),
        sa.Column("raw_link", sa.Text(), nullable=True),
        sa.Column("raw_text", sa.Text(), nullable=True),
        sa.Column("training_type", sa.String(length=32), nullable=False),
        sa.Column("chunk_settings", sa.JSON(), nullable=False),
        sa.Column("metadata", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("chunks_total", sa.Integer(), nullable=False),
        sa.Column("chunks_done", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["dataset_id"],
            ["datasets.id"],
            name=op.f("fk_collections_dataset_id_datasets"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["team_id"], ["teams.id"], name=op.f("fk_collections_team_id_teams"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_collections")),
    )
    with op.batch_alter_table("collections", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_collections_dataset_id"), ["dataset_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_collections_team_id"), ["team_id"], unique=False)

    op.create_table(
        "resource_permissions",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("team_id", sa.String(length=24), nullable=False),
        sa.Column("member_id", sa.String(length=24), nullable=False),
        sa.Column("resource_type", sa.String(length=16), nullable=False),
        sa.Column("resource_id", sa.String(length=24), nullable=False),
        sa.Column("permission", sa.String(length=16), nullable=False),
        sa.ForeignKeyConstraint(
            ["member_id"],
            ["members.id"],
            name=op.f("fk_resource_permissions_member_id_members"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["team_id"], ["teams.id"], name=op.f("fk_resource_permissions_team_id_teams"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_resource_permissions")),
        sa.UniqueConstraint(
            "member_id", "resource_type", "resource_id", name=op.f("uq_resource_permissions_member_id")
        ),
    )
    with op.batch_alter_table("resource_permissions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_resource_permissions_member_id"), ["member_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_resource_permissions_team_id"), ["team_id"], unique=False)

    op.create_table(
        "data_chunks",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("team_id", sa.String(length=24), nullable=False),
        sa.Column("dataset_id", sa.String(length=24), nullable=False),
        sa.Column("collection_id", sa.String(length=24), nullable=False),
        sa.Column("chunk_index", sa.Integer(), nullable=False),
        sa.Column("q", sa.Text(), nullable=False),
        sa.Column("a", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["collection_id"],
            ["collections.id"],
            name=op.f("fk_data_chunks_collection_id_collections"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["dataset_id"],
            ["datasets.id"],
            name=op.f("fk_data_chunks_dataset_id_datasets"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["team_id"], ["teams.id"], name=op.f("fk_data_chunks_team_id_teams"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_data_chunks")),
    )
    with op.batch_alter_table("data_chunks", schema=None) as batch_op:
        batch_op.create_index("ix_data_chunks_collection", ["collection_id", "chunk_index"], unique=False)
        batch_op.create_index(batch_op.f("ix_data_chunks_dataset_id"), ["dataset_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_data_chunks_team_id"), ["team_id"], unique=False)

    op.create_table(
        "data_indexes",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("team_id", sa.String(length=24), nullable=False),
        sa.Column("dataset_id", sa.String(length=24), nullable=False),
        sa.Column("data_id", sa.String(length=24), nullable=False),
        sa.Column("type", sa.String(length=16), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("collection_id", sa.String(length=24), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("dims", sa.Integer(), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=True),
        sa.ForeignKeyConstraint(
            ["data_id"],
            ["data_chunks.id"],
            name=op.f("fk_data_indexes_data_id_data_chunks"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["dataset_id"],
            ["datasets.id"],
            name=op.f("fk_data_indexes_dataset_id_datasets"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["team_id"], ["teams.id"], name=op.f("fk_data_indexes_team_id_teams"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_data_indexes")),
    )
    with op.batch_alter_table("data_indexes", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_data_indexes_collection_id"), ["collection_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_data_indexes_data_id"), ["data_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_data_indexes_dataset_id"), ["dataset_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_data_indexes_team_id"), ["team_id"], unique=False)


def downgrade() -> None:

    with op.batch_alter_table("data_indexes", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_data_indexes_team_id"))
        batch_op.drop_index(batch_op.f("ix_data_indexes_dataset_id"))
        batch_op.drop_index(batch_op.f("ix_data_indexes_data_id"))
        batch_op.drop_index(batch_op.f("ix_data_indexes_collection_id"))

    op.drop_table("data_indexes")
    with op.batch_alter_table("data_chunks", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_data_chunks_team_id"))
        batch_op.drop_index(batch_op.f("ix_data_chunks_dataset_id"))
        batch_op.drop_index("ix_data_chunks_collection")

    op.drop_table("data_chunks")
    with op.batch_alter_table("resource_permissions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_resource_permissions_team_id"))
        batch_op.drop_index(batch_op.f("ix_resource_permissions_member_id"))

    op.drop_table("resource_permissions")
    with op.batch_alter_table("collections", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_collections_team_id"))
        batch_op.drop_index(batch_op.f("ix_collections_dataset_id"))

    op.drop_table("collections")
    with op.batch_alter_table("chats", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_chats_team_id"))
        batch_op.drop_index(batch_op.f("ix_chats_app_id"))

    op.drop_table("chats")
    with op.batch_alter_table("chat_items", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_chat_items_team_id"))
        batch_op.drop_index("ix_chat_items_chat")

    op.drop_table("chat_items")
    with op.batch_alter_table("app_versions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_app_versions_team_id"))
        batch_op.drop_index(batch_op.f("ix_app_versions_app_id"))

    op.drop_table("app_versions")
    with op.batch_alter_table("api_keys", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_api_keys_team_id"))
        batch_op.drop_index(batch_op.f("ix_api_keys_member_id"))

    op.drop_table("api_keys")
    with op.batch_alter_table("usage_records", schema=None) as batch_op:
        batch_op.drop_index("ix_usage_team_time")
        batch_op.drop_index(batch_op.f("ix_usage_records_team_id"))
        batch_op.drop_index(batch_op.f("ix_usage_records_app_id"))

    op.drop_table("usage_records")
    with op.batch_alter_table("stored_files", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_stored_files_team_id"))

    op.drop_table("stored_files")
    with op.batch_alter_table("members", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_members_team_id"))

    op.drop_table("members")
    with op.batch_alter_table("datasets", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_datasets_team_id"))

    op.drop_table("datasets")
    with op.batch_alter_table("apps", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_apps_team_id"))

    op.drop_table("apps")
    op.drop_table("teams")
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_jobs_team_id"))
        batch_op.drop_index("ix_jobs_claim")

    op.drop_table("jobs")
