"""SQLAlchemy table models: one schema for SQLite and PostgreSQL.

Identifiers are 24-character hex strings, the shape of FastGPT's Mongo ObjectIds, so ids coming from
FastGPT clients look the same. JSON columns hold FastGPT wire data (workflow graphs, chat values) unchanged.
"""

from __future__ import annotations

import secrets
import time
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from fathom.store.protocols import DEFAULT_SHARE_QPM

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def new_id() -> str:
    """A new 24-hex-character id: 4 bytes of seconds then 8 random bytes, like a Mongo ObjectId."""
    return f"{int(time.time()):08x}{secrets.token_hex(8)}"


def utcnow() -> datetime:
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes on both backends (SQLite stores naive UTC text)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is not UTC:  # utcnow()'s values are UTC already
            value = value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map = {dict[str, Any]: JSON, list[Any]: JSON}


def _id() -> Mapped[str]:
    return mapped_column(String(24), primary_key=True, default=new_id)


def _created() -> Mapped[datetime]:
    return mapped_column(UTCDateTime(), default=utcnow, nullable=False)


def _team_fk() -> Mapped[str]:
    return mapped_column(String(24), ForeignKey("teams.id", ondelete="CASCADE"), index=True, nullable=False)


class Team(Base):
    __tablename__ = "teams"
    id: Mapped[str] = _id()
    name: Mapped[str] = mapped_column(String(200), nullable=False)
    created_at: Mapped[datetime] = _created()


class Member(Base):
    """A person (or service identity) in a team, with a role: owner, admin or member."""

    __tablename__ = "members"
    __table_args__ = (UniqueConstraint("team_id", "name"),)
    id: Mapped[str] = _id()
    team_id: Mapped[str] = _team_fk()
    name: Mapped[str] = mapped_column(String(200), nullable=False)
    role: Mapped[str] = mapped_column(String(16), nullable=False, default="member")
    created_at: Mapped[datetime] = _created()


class ResourcePermission(Base):
    """A member's permission on one app or dataset: read, write or manage."""

    __tablename__ = "resource_permissions"
    __table_args__ = (UniqueConstraint("member_id", "resource_type", "resource_id"),)
    id: Mapped[str] = _id()
    team_id: Mapped[str] = _team_fk()
    member_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("members.id", ondelete="CASCADE"), index=True
    )
    resource_type: Mapped[str] = mapped_column(String(16), nullable=False)
    resource_id: Mapped[str] = mapped_column(String(24), nullable=False)
    permission: Mapped[str] = mapped_column(String(16), nullable=False)


class ApiKey(Base):
    """An API key. Only its SHA-256 hash is stored; the plain key is shown once at creation."""

    __tablename__ = "api_keys"
    id: Mapped[str] = _id()
    team_id: Mapped[str] = _team_fk()
    member_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("members.id", ondelete="CASCADE"), index=True
    )
    app_id: Mapped[str | None] = mapped_column(String(24), nullable=True)
    name: Mapped[str] = mapped_column(String(200), nullable=False, default="")
    key_hash: Mapped[str] = mapped_column(String(64), unique=True, nullable=False)
    prefix: Mapped[str] = mapped_column(String(16), nullable=False)
    usage_points: Mapped[float] = mapped_column(Float, nullable=False, default=0.0)
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    created_at: Mapped[datetime] = _created()


class User(Base):
    """A person who signs in with a password: one member of a team. Only an argon2 hash is stored."""

    __tablename__ = "users"
    id: Mapped[str] = _id()
    member_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("members.id", ondelete="CASCADE"), unique=True, nullable=False
    )
    username: Mapped[str] = mapped_column(String(64), unique=True, nullable=False)
    password_hash: Mapped[str] = mapped_column(String(200), nullable=False)
    password_changed_at: Mapped[datetime] = _created()
    created_at: Mapped[datetime] = _created()


class UserSession(Base):
    """A console sign-in: the cookie's token is stored as its SHA-256 hash; deleting the row signs out."""

    __tablename__ = "user_sessions"
    id: Mapped[str] = _id()
    user_id: Mapped[str] = mapped_column(String(24), ForeignKey("users.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True, nullable=False)
    csrf_token: Mapped[str] = mapped_column(String(64), nullable=False)
    client_ip: Mapped[str] = mapped_column(String(64), nullable=False, default="")
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime(), nullable=False)
    created_at: Mapped[datetime] = _created()


class Invitation(Base):
    """A link that lets one person join a team with a role: its token is stored hashed, used once."""

    __tablename__ = "invitations"
    id: Mapped[str] = _id()
    team_id: Mapped[str] = _team_fk()
    role: Mapped[str] = mapped_column(String(16), nullable=False)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True, nullable=False)
    created_by: Mapped[str | None] = mapped_column(String(24), nullable=True)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime(), nullable=False)
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    used_by: Mapped[str | None] = mapped_column(String(24), nullable=True)
    created_at: Mapped[datetime] = _created()


class SignInAttempts(Base):
    """Sign-in attempts counted per username and per client IP (``scope``) in a fixed window that starts
    at the first one: one row per counter, incremented and read back in one statement, so concurrent
    guesses cannot all pass the check (issue 28)."""

    __tablename__ = "sign_in_attempts"
    __table_args__ = (Index("ix_sign_in_attempts_window_started_at", "window_started_at"),)
    scope: Mapped[str] = mapped_column(String(8), primary_key=True)
    key: Mapped[str] = mapped_column(String(128), primary_key=True)
    count: Mapped[int] = mapped_column(Integer, nullable=False)
    window_started_at: Mapped[datetime] = mapped_column(UTCDateTime(), nullable=False)


class App(Base):
    __tablename__ = "apps"
    id: Mapped[str] = _id()
    team_id: Mapped[str] = _team_fk()
    member_id: Mapped[str | None] = mapped_column(String(24), nullable=True)
    name: Mapped[str] = mapped_column(String(200), nullable=False)
    type: Mapped[str] = mapped_column(String(32), nullable=False, default="simple")
    intro: Mapped[str] = mapped_column(Text, nullable=False, default="")
    avatar: Mapped[str] = mapped_column(String(500), nullable=False, default="")
    draft: Mapped[dict[str, Any]] = mapped_column(JSON, nullable=False, default=dict)
    published_version_id: Mapped[str | None] = mapped_column(String(24), nullable=True)
    created_at: Mapped[datetime] = _created()
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)


class AppVersion(Base):
    """A frozen snapshot of an app's graph and settings; published versions serve API runs."""

    __tablename__ = "app_versions"
    id: Mapped[str] = _id()
    app_id: Mapped[str] = mapped_column(String(24), ForeignKey("apps.id", ondelete="CASCADE"), index=True)
    team_id: Mapped[str] = _team_fk()
    version_name: Mapped[str] = mapped_column(String(200), nullable=False, default="")
    nodes: Mapped[list[Any]] = mapped_column(JSON, nullable=False, default=list)
    edges: Mapped[list[Any]] = mapped_column(JSON, nullable=False, default=list)
    chat_config: Mapped[dict[str, Any]] = mapped_column(JSON, nullable=False, default=dict)
    is_publish: Mapped[bool] = mapped_column(Boolean, nullable=False, default=True)
    created_at: Mapped[datetime] = _created()


class Chat(Base):
    __tablename__ = "chats"
    __table_args__ = (
        UniqueConstraint("app_id", "chat_id"),
        Index("ix_chats_share", "app_id", "share_id", "out_link_uid"),
        Index("ix_chats_app_updated", "app_id", "updated_at"),
        Index("ix_chats_owner", "app_id", "owner_kind", "member_id", "api_key_id"),
    )
    id: Mapped[str] = _id()
    chat_id: Mapped[str] = mapped_column(String(1024), nullable=False)
    team_id: Mapped[str] = _team_fk()
    app_id: Mapped[str] = mapped_column(String(24), ForeignKey("apps.id", ondelete="CASCADE"), index=True)
    member_id: Mapped[str | None] = mapped_column(String(24), nullable=True)  # the member a run acts as
    # the owner (fathom.chat.ownership): "member" (member_id), "key" (api_key_id) or "visitor" (share_id
    # + out_link_uid)
    owner_kind: Mapped[str] = mapped_column(
        String(16), nullable=False, default="member", server_default="member"
    )
    api_key_id: Mapped[str | None] = mapped_column(String(24), nullable=True)
    title: Mapped[str] = mapped_column(String(500), nullable=False, default="")
    custom_title: Mapped[str] = mapped_column(String(500), nullable=False, default="")
    top: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    source: Mapped[str] = mapped_column(String(32), nullable=False, default="api")
    share_id: Mapped[str | None] = mapped_column(String(32), nullable=True)  # a share link's chats
    out_link_uid: Mapped[str | None] = mapped_column(String(255), nullable=True)  # ... per visitor
    variables: Mapped[dict[str, Any]] = mapped_column(JSON, nullable=False, default=dict)
    metadata_: Mapped[dict[str, Any]] = mapped_column("metadata", JSON, nullable=False, default=dict)
    created_at: Mapped[datetime] = _created()
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)


class ShareLink(Base):
    """A share link (FastGPT's outLink): anyone with its ``share_id`` chats with the app's published
    version, within the link's limits. ``usage_points`` counts what its chats have cost."""

    __tablename__ = "share_links"
    id: Mapped[str] = _id()
    share_id: Mapped[str] = mapped_column(String(32), unique=True, nullable=False)
    team_id: Mapped[str] = _team_fk()
    app_id: Mapped[str] = mapped_column(String(24), ForeignKey("apps.id", ondelete="CASCADE"), index=True)
    member_id: Mapped[str] = mapped_column(String(24), nullable=False)  # who made it; chats run as them
    type: Mapped[str] = mapped_column(String(32), nullable=False, default="share")
    name: Mapped[str] = mapped_column(String(200), nullable=False)
    response_detail: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    show_node_status: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    show_raw_source: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    expired_time: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    qpm: Mapped[int] = mapped_column(Integer, nullable=False, default=DEFAULT_SHARE_QPM)  # 0 = no limit
    max_usage_points: Mapped[float] = mapped_column(Float, nullable=False, default=-1.0)  # -1 = none
    hook_url: Mapped[str] = mapped_column(String(2000), nullable=False, default="")
    allowed_origins: Mapped[list[Any]] = mapped_column(
        JSON, nullable=False, default=list, server_default="[]"
    )  # the sites that may show the share page in a frame
    usage_points: Mapped[float] = mapped_column(Float, nullable=False, default=0.0)
    last_time: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    created_at: Mapped[datetime] = _created()


class ShareLinkHit(Base):
    """One answered chat request of a visitor through a share link, kept a minute: the QPM limit counts
    them in the database, so it holds across replicas."""

    __tablename__ = "share_link_hits"
    __table_args__ = (Index("ix_share_link_hits_link_uid_at", "link_id", "out_link_uid", "created_at"),)
    id: Mapped[str] = _id()
    link_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("share_links.id", ondelete="CASCADE"), nullable=False
    )
    out_link_uid: Mapped[str] = mapped_column(String(255), nullable=False)
    created_at: Mapped[datetime] = _created()


class ChatItem(Base):
    __tablename__ = "chat_items"
    __table_args__ = (
        UniqueConstraint("app_id", "chat_id", "data_id"),
        Index("ix_chat_items_chat", "app_id", "chat_id", "seq"),
    )
    id: Mapped[str] = _id()
    team_id: Mapped[str] = _team_fk()
    app_id: Mapped[str] = mapped_column(String(24), ForeignKey("apps.id", ondelete="CASCADE"), nullable=False)
    chat_id: Mapped[str] = mapped_column(String(1024), nullable=False)
    data_id: Mapped[str] = mapped_column(String(64), nullable=False)
    seq: Mapped[int] = mapped_column(BigInteger, nullable=False)
    obj: Mapped[str] = mapped_column(String(16), nullable=False)
    value: Mapped[list[Any]] = mapped_column(JSON, nullable=False, default=list)
    response_data: Mapped[list[Any]] = mapped_column(JSON, nullable=False, default=list)
    user_good_feedback: Mapped[str | None] = mapped_column(Text, nullable=True)
    user_bad_feedback: Mapped[str | None] = mapped_column(Text, nullable=True)
    # the owner's mark and corrected answer (FastGPT's adminFeedback: feedbackDataId, datasetId,
    # collectionId, q, a)
    admin_feedback: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True), nullable=True)
    duration_seconds: Mapped[float | None] = mapped_column(Float, nullable=True)
    created_at: Mapped[datetime] = _created()
    # ``running`` from the run's start until it finished the item (then NULL); the running replica
    # refreshes ``heartbeat_at``: a running item with a stale heartbeat was interrupted (migration 0019)
    status: Mapped[str | None] = mapped_column(String(16), nullable=True)
    heartbeat_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class Dataset(Base):
    __tablename__ = "datasets"
    __table_args__ = (Index("ix_datasets_parent", "team_id", "parent_id"),)
    id: Mapped[str] = _id()
    team_id: Mapped[str] = _team_fk()
    member_id: Mapped[str | None] = mapped_column(String(24), nullable=True)
    parent_id: Mapped[str | None] = mapped_column(String(24), nullable=True)
    name: Mapped[str] = mapped_column(String(200), nullable=False)
    intro: Mapped[str] = mapped_column(Text, nullable=False, default="")
    type: Mapped[str] = mapped_column(String(32), nullable=False, default="dataset")
    vector_model: Mapped[str] = mapped_column(String(200), nullable=False)
    agent_model: Mapped[str] = mapped_column(String(200), nullable=False, default="")
    # the vision model describing images (migration 0022); "": none chosen
    vlm_model: Mapped[str] = mapped_column(String(200), nullable=False, default="", server_default="")
    chunk_settings: Mapped[dict[str, Any]] = mapped_column(JSON, nullable=False, default=dict)
    index_version: Mapped[int] = mapped_column(BigInteger, nullable=False, default=0)
    # vectorModel "auto": True until the first import settles the model; why auto chose it
    auto_model_pending: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    auto_model_reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = _created()
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)


class Collection(Base):
    """A source inside a dataset (a file, a URL, pasted text) and its ingestion state."""

    __tablename__ = "collections"
    __table_args__ = (
        Index("ix_collections_external_file", "dataset_id", "external_file_id"),
        Index("ix_collections_parent", "dataset_id", "parent_id"),
    )
    id: Mapped[str] = _id()
    team_id: Mapped[str] = _team_fk()
    dataset_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("datasets.id", ondelete="CASCADE"), index=True
    )
    parent_id: Mapped[str | None] = mapped_column(String(24), nullable=True)
    name: Mapped[str] = mapped_column(String(500), nullable=False)
    type: Mapped[str] = mapped_column(String(32), nullable=False)
    file_id: Mapped[str | None] = mapped_column(String(24), nullable=True)
    raw_link: Mapped[str | None] = mapped_column(Text, nullable=True)
    raw_text: Mapped[str | None] = mapped_column(Text, nullable=True)
    training_type: Mapped[str] = mapped_column(String(32), nullable=False, default="chunk")
    chunk_settings: Mapped[dict[str, Any]] = mapped_column(JSON, nullable=False, default=dict)
    metadata_: Mapped[dict[str, Any]] = mapped_column("metadata", JSON, nullable=False, default=dict)
    status: Mapped[str] = mapped_column(String(16), nullable=False, default="waiting")
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    chunks_total: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    chunks_done: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    # FastGPT's externalFileId (a client's own id for the file), tag names, and forbid (left out of search)
    external_file_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    tags: Mapped[list[Any]] = mapped_column(JSON, nullable=False, default=list, server_default="[]")
    forbid: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False, server_default=false())
    created_at: Mapped[datetime] = _created()
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)


class DataChunk(Base):
    """One chunk of a collection: the question/answer text (FastGPT's q/a) and its position."""

    __tablename__ = "data_chunks"
    __table_args__ = (Index("ix_data_chunks_collection", "collection_id", "chunk_index"),)
    id: Mapped[str] = _id()
    team_id: Mapped[str] = _team_fk()
    dataset_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("datasets.id", ondelete="CASCADE"), index=True
    )
    collection_id: Mapped[str] = mapped_column(String(24), ForeignKey("collections.id", ondelete="CASCADE"))
    chunk_index: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    q: Mapped[str] = mapped_column(Text, nullable=False)
    a: Mapped[str] = mapped_column(Text, nullable=False, default="")
    tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)  # cl100k tokens of q + a, if counted
    created_at: Mapped[datetime] = _created()
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)


class TrainingItem(Base):
    """A chunk waiting for the model (FastGPT's ``dataset_trainings``): ``mode`` ``qa`` (the model writes
    question/answer pairs) or ``auto`` (the model writes extra index texts). The item is deleted in the
    transaction that writes what the model made of it; a chunk the model keeps failing on stays, with
    ``error`` set, until it is retried."""

    __tablename__ = "training_items"
    __table_args__ = (Index("ix_training_items_collection", "collection_id", "chunk_index"),)
    id: Mapped[str] = _id()
    team_id: Mapped[str] = _team_fk()
    dataset_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("datasets.id", ondelete="CASCADE"), index=True
    )
    collection_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("collections.id", ondelete="CASCADE"), nullable=False
    )
    mode: Mapped[str] = mapped_column(String(16), nullable=False)
    chunk_index: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    q: Mapped[str] = mapped_column(Text, nullable=False)
    a: Mapped[str] = mapped_column(Text, nullable=False, default="")
    prompt: Mapped[str | None] = mapped_column(Text, nullable=True)  # overrides the collection's qaPrompt
    bill_id: Mapped[str | None] = mapped_column(String(24), nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = _created()
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)


class DataIndex(Base):
    """An index text of a chunk, with its embedding (float32 bytes) and the model that made it."""

    __tablename__ = "data_indexes"
    id: Mapped[str] = _id()
    team_id: Mapped[str] = _team_fk()
    dataset_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("datasets.id", ondelete="CASCADE"), index=True
    )
    data_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("data_chunks.id", ondelete="CASCADE"), index=True, nullable=False
    )
    type: Mapped[str] = mapped_column(String(16), nullable=False, default="default")
    text: Mapped[str] = mapped_column(Text, nullable=False)
    collection_id: Mapped[str] = mapped_column(String(24), nullable=False, index=True)
    model: Mapped[str] = mapped_column(String(200), nullable=False)
    dims: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    # float32 little-endian, L2-normalised. PostgreSQL also keeps a pgvector copy in the column
    # ``embedding`` (added by migration 0002, outside these models) for HNSW search.
    vector: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)


class Job(Base):
    """A durable background job: claimed with a lease, kept by heartbeats, retried boundedly."""

    __tablename__ = "jobs"
    __table_args__ = (
        Index("ix_jobs_claim", "status", "run_after"),
        Index("ix_jobs_lane_claimed", "lane", "claimed_at"),
        Index("ix_jobs_lane_status", "lane", "status"),
    )
    id: Mapped[str] = _id()
    team_id: Mapped[str | None] = mapped_column(String(24), index=True, nullable=True)
    kind: Mapped[str] = mapped_column(String(64), nullable=False)
    payload: Mapped[dict[str, Any]] = mapped_column(JSON, nullable=False, default=dict)
    status: Mapped[str] = mapped_column(String(16), nullable=False, default="queued")
    attempts: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    max_attempts: Mapped[int] = mapped_column(Integer, nullable=False, default=3)
    lease_expiries: Mapped[int] = mapped_column(Integer, nullable=False, default=0, server_default="0")
    # what the job works on (a knowledge base): workers take jobs round-robin across lanes
    lane: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # claimed before any job of a lower priority (0 normal; the demo's ingestion is below it)
    priority: Mapped[int] = mapped_column(Integer, nullable=False, default=0, server_default="0")
    claimed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    run_after: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, nullable=False)
    lease_owner: Mapped[str | None] = mapped_column(String(100), nullable=True)
    lease_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = _created()
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)


class UsageRecord(Base):
    """What a run cost: tokens and points per module, for usage per app and per day."""

    __tablename__ = "usage_records"
    __table_args__ = (Index("ix_usage_team_time", "team_id", "created_at"),)
    id: Mapped[str] = _id()
    team_id: Mapped[str] = _team_fk()
    app_id: Mapped[str | None] = mapped_column(String(24), nullable=True, index=True)
    api_key_id: Mapped[str | None] = mapped_column(String(24), nullable=True)
    source: Mapped[str] = mapped_column(String(32), nullable=False, default="api")
    module_name: Mapped[str] = mapped_column(String(200), nullable=False, default="")
    model: Mapped[str] = mapped_column(String(200), nullable=False, default="")
    input_tokens: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    output_tokens: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    total_points: Mapped[float] = mapped_column(Float, nullable=False, default=0.0)
    # the training bill (``TrainingBill``) a training's record belongs to
    bill_id: Mapped[str | None] = mapped_column(String(24), nullable=True, index=True)
    created_at: Mapped[datetime] = _created()


class DatasetTag(Base):
    """A knowledge base's tag (FastGPT's ``dataset_collection_tags``): collections carry its name."""

    __tablename__ = "dataset_tags"
    __table_args__ = (UniqueConstraint("dataset_id", "tag"),)
    id: Mapped[str] = _id()
    team_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("teams.id", ondelete="CASCADE"), nullable=False
    )
    dataset_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False
    )
    tag: Mapped[str] = mapped_column(String(100), nullable=False)
    created_at: Mapped[datetime] = _created()


class TrainingBill(Base):
    """FastGPT's training usage (``createTrainingUsage``): a name under which the usage records of the
    trainings that name its id (``billId``) are grouped."""

    __tablename__ = "training_bills"
    id: Mapped[str] = _id()
    team_id: Mapped[str] = _team_fk()
    dataset_id: Mapped[str] = mapped_column(String(24), nullable=False)
    name: Mapped[str] = mapped_column(String(200), nullable=False)
    member_id: Mapped[str | None] = mapped_column(String(24), nullable=True)
    api_key_id: Mapped[str | None] = mapped_column(String(24), nullable=True)
    created_at: Mapped[datetime] = _created()


class UploadHit(Base):
    """One upload of a caller (``member:<id>``, ``key:<id>`` or ``visitor:<link>:<uid>``), kept a minute:
    the per-caller upload limit counts them in the database, so it holds across replicas."""

    __tablename__ = "upload_hits"
    __table_args__ = (Index("ix_upload_hits_caller_at", "caller", "created_at"),)
    id: Mapped[str] = _id()
    caller: Mapped[str] = mapped_column(String(320), nullable=False)
    created_at: Mapped[datetime] = _created()


class StoredFile(Base):
    """An uploaded file's metadata; the bytes live in the file store (a directory or object storage).
    A chat file records its app and chat, so it goes with them."""

    __tablename__ = "stored_files"
    __table_args__ = (
        Index("ix_stored_files_chat", "team_id", "app_id", "chat_id"),
        Index("ix_stored_files_sha256", "sha256"),
    )
    id: Mapped[str] = _id()
    team_id: Mapped[str] = _team_fk()
    member_id: Mapped[str | None] = mapped_column(String(24), nullable=True)
    app_id: Mapped[str | None] = mapped_column(String(24), nullable=True)
    chat_id: Mapped[str | None] = mapped_column(String(1024), nullable=True)
    bucket: Mapped[str] = mapped_column(String(32), nullable=False, default="dataset")
    name: Mapped[str] = mapped_column(String(500), nullable=False)
    content_type: Mapped[str] = mapped_column(String(200), nullable=False, default="application/octet-stream")
    size: Mapped[int] = mapped_column(BigInteger, nullable=False)
    sha256: Mapped[str] = mapped_column(String(64), nullable=False)
    storage_key: Mapped[str] = mapped_column(String(500), nullable=False)
    created_at: Mapped[datetime] = _created()


class KnowledgeSource(Base):
    """Where a knowledge base's content lives outside Fathom (FastGPT's ``apiDataset`` server or
    ``websiteDataset`` start URL) and its re-sync schedule (``autoSync``). ``secret``: the API file
    library's authorization, encrypted with the platform's secret key."""

    __tablename__ = "knowledge_sources"
    __table_args__ = (Index("ix_knowledge_sources_due", "auto_sync", "next_sync_at"),)
    dataset_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("datasets.id", ondelete="CASCADE"), primary_key=True
    )
    team_id: Mapped[str] = _team_fk()
    kind: Mapped[str] = mapped_column(String(32), nullable=False)
    config: Mapped[dict[str, Any]] = mapped_column(JSON, nullable=False, default=dict)
    secret: Mapped[str | None] = mapped_column(Text, nullable=True)
    auto_sync: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    sync_interval_seconds: Mapped[int] = mapped_column(Integer, nullable=False, default=86400)
    next_sync_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    created_at: Mapped[datetime] = _created()
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)


class CollectionSource(Base):
    """What a synced collection was made from (a page URL or an API file id) and the hash of the text
    its chunks hold now: a re-sync that reads the same text again changes nothing."""

    __tablename__ = "collection_sources"
    collection_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("collections.id", ondelete="CASCADE"), primary_key=True
    )
    dataset_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("datasets.id", ondelete="CASCADE"), index=True, nullable=False
    )
    kind: Mapped[str] = mapped_column(String(32), nullable=False)
    ref: Mapped[str] = mapped_column(Text, nullable=False)
    content_hash: Mapped[str | None] = mapped_column(String(64), nullable=True)
    synced_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)


class SourceSync(Base):
    """One sync run of a knowledge base or a collection: its progress, counts and what failed."""

    __tablename__ = "source_syncs"
    __table_args__ = (Index("ix_source_syncs_dataset_created", "dataset_id", "created_at"),)
    id: Mapped[str] = _id()
    team_id: Mapped[str] = _team_fk()
    dataset_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False
    )
    collection_id: Mapped[str | None] = mapped_column(String(24), nullable=True)
    trigger: Mapped[str] = mapped_column(String(16), nullable=False)
    status: Mapped[str] = mapped_column(String(16), nullable=False, default="queued")
    counts: Mapped[dict[str, Any]] = mapped_column(JSON, nullable=False, default=dict)
    failures: Mapped[list[Any]] = mapped_column(JSON, nullable=False, default=list)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    created_at: Mapped[datetime] = _created()
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
