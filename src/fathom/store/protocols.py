"""Repositories named in domain terms, as Protocols over plain records.

These modules import no database library: domain packages may depend on them. The SQL implementations
(``fathom.store.repositories``, ``fathom.store.knowledge``) serve SQLite and PostgreSQL alike and pass the
same conformance suite. This module holds teams, accounts, keys, jobs and knowledge bases; the chat side
is in :mod:`fathom.store.chat_protocols`, usage in :mod:`fathom.store.usage_protocols`, stored files in
:mod:`fathom.store.file_protocols`. All their names are re-exported here, so a caller imports any record
or repository from ``fathom.store.protocols``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol

from fathom.store.chat_protocols import (
    DEFAULT_SHARE_QPM,
    AppOwnerRepository,
    AppRecord,
    AppRepository,
    AppVersionRecord,
    ChatHistory,
    ChatItemRecord,
    ChatLogEntry,
    ChatLogQuery,
    ChatLogRepository,
    ChatOwner,
    ChatRecord,
    ChatRepository,
    ChatTurn,
    ChatTurnRepository,
    FeedbackFilter,
    HistoryItem,
    ShareLinkRecord,
    ShareLinkRepository,
    ShareLinkSettings,
)
from fathom.store.file_protocols import FileStore, StorageQuotaExceeded, StoredFileRecord
from fathom.store.usage_protocols import (
    BillTotals,
    TrainingBillRecord,
    UsageRecord,
    UsageRepository,
    UsageSummaryRow,
)

# re-exported: a caller names any record or repository from this module
__all__ = [
    "AppOwnerRepository",
    "AppRecord",
    "AppRepository",
    "AppVersionRecord",
    "BillTotals",
    "ChatHistory",
    "ChatItemRecord",
    "ChatLogEntry",
    "ChatLogQuery",
    "ChatLogRepository",
    "ChatOwner",
    "ChatRecord",
    "ChatRepository",
    "ChatTurn",
    "ChatTurnRepository",
    "DEFAULT_SHARE_QPM",
    "FeedbackFilter",
    "FileStore",
    "HistoryItem",
    "ShareLinkRecord",
    "ShareLinkRepository",
    "ShareLinkSettings",
    "StorageQuotaExceeded",
    "StoredFileRecord",
    "TrainingBillRecord",
    "UsageRecord",
    "UsageRepository",
    "UsageSummaryRow",
]

Role = Literal["owner", "admin", "member"]


Permission = Literal["read", "write", "manage"]


JobStatus = Literal["queued", "running", "done", "failed"]


ROLES: tuple[Role, ...] = ("owner", "admin", "member")


PERMISSIONS: tuple[Permission, ...] = ("read", "write", "manage")


class NotFound(LookupError):
    """The record does not exist (or is not visible to the caller)."""


class Conflict(ValueError):
    """The write would break a uniqueness rule; the message names it."""


class AlreadyTrained(Exception):
    """A training item's result was written already (by another run): this run's result is dropped."""


class PermanentJobFailure(Exception):
    """A job handler's failure that no retry can fix (a refused or missing source, a document that does
    not parse): the worker fails the job at once with this message instead of trying it again."""


@dataclass(frozen=True)
class TeamRecord:
    id: str
    name: str
    created_at: datetime


@dataclass(frozen=True)
class MemberRecord:
    id: str
    team_id: str
    name: str
    role: Role
    created_at: datetime


@dataclass(frozen=True)
class UserRecord:
    """A person who signs in with a password, and the member (team, role) they act as."""

    id: str
    member_id: str
    team_id: str
    username: str
    role: Role
    password_hash: str
    created_at: datetime


@dataclass(frozen=True)
class SessionRecord:
    id: str
    user_id: str
    csrf_token: str
    client_ip: str
    expires_at: datetime
    created_at: datetime


@dataclass(frozen=True)
class AttemptCount:
    """A sign-in attempt counter after an attempt was counted: how many in its window, since when."""

    count: int
    window_started_at: datetime


@dataclass(frozen=True)
class InvitationRecord:
    id: str
    team_id: str
    role: Role
    created_by: str | None
    expires_at: datetime
    used_at: datetime | None
    used_by: str | None
    created_at: datetime


@dataclass(frozen=True)
class ApiKeyRecord:
    id: str
    team_id: str
    member_id: str
    app_id: str | None
    name: str
    prefix: str
    usage_points: float
    last_used_at: datetime | None
    revoked_at: datetime | None
    created_at: datetime


@dataclass(frozen=True)
class JobRecord:
    id: str
    team_id: str | None
    kind: str
    payload: dict[str, Any]
    status: JobStatus
    attempts: int
    max_attempts: int
    run_after: datetime
    lease_owner: str | None
    lease_expires_at: datetime | None
    last_error: str | None
    result: dict[str, Any] | None
    created_at: datetime
    lease_expiries: int = 0  # runs whose worker died (lease lapsed); never counted as attempts
    lane: str | None = None
    claimed_at: datetime | None = None
    priority: int = 0  # higher is claimed first; 0 normal


class TeamRepository(Protocol):
    async def create_team(self, name: str) -> TeamRecord: ...
    async def get_team(self, team_id: str) -> TeamRecord: ...
    async def count_teams(self) -> int: ...
    async def first_team(self) -> TeamRecord | None: ...
    async def first_owner(self, team_id: str) -> MemberRecord | None: ...
    async def add_member(self, team_id: str, name: str, role: Role = "member") -> MemberRecord: ...
    async def get_member(self, member_id: str) -> MemberRecord: ...
    async def member_role(self, member_id: str) -> Role | None: ...
    async def list_members(self, team_id: str) -> list[MemberRecord]: ...
    async def set_role(self, team_id: str, member_id: str, role: Role) -> MemberRecord: ...
    async def remove_member(self, team_id: str, member_id: str) -> None: ...
    async def list_permissions(
        self, team_id: str, resource_type: str, resource_id: str
    ) -> list[tuple[MemberRecord, Permission]]: ...
    async def set_permission(
        self, member_id: str, resource_type: str, resource_id: str, permission: Permission | None
    ) -> None: ...
    async def get_permission(
        self, member_id: str, resource_type: str, resource_id: str
    ) -> Permission | None: ...


class ApiKeyRepository(Protocol):
    async def create_key(
        self, team_id: str, member_id: str, *, name: str = "", app_id: str | None = None
    ) -> tuple[ApiKeyRecord, str]: ...
    async def find_by_plain_key(self, plain_key: str) -> ApiKeyRecord | None: ...
    async def list_keys(self, team_id: str, app_id: str | None = None) -> list[ApiKeyRecord]: ...
    async def revoke_key(self, team_id: str, key_id: str) -> None: ...
    async def record_use(self, key_id: str, points: float = 0.0) -> None: ...


class JobQueue(Protocol):
    async def enqueue(
        self,
        kind: str,
        payload: dict[str, Any],
        *,
        team_id: str | None = None,
        max_attempts: int = 3,
        run_after: datetime | None = None,
        lane: str | None = None,
        priority: int = 0,
    ) -> JobRecord: ...
    async def claim(
        self, worker_id: str, *, lease_seconds: float, kinds: list[str] | None = None
    ) -> JobRecord | None: ...
    async def heartbeat(self, job_id: str, worker_id: str, *, lease_seconds: float) -> bool: ...
    async def complete(self, job_id: str, worker_id: str, result: dict[str, Any] | None = None) -> bool: ...
    async def fail(
        self,
        job_id: str,
        worker_id: str,
        error: str,
        *,
        retry_delay_seconds: float = 0,
        permanent: bool = False,
    ) -> bool: ...
    async def retry(self, job_id: str) -> JobRecord: ...
    async def get(self, job_id: str) -> JobRecord: ...
    async def list_jobs(
        self, *, status: JobStatus | None = None, kind: str | None = None
    ) -> list[JobRecord]: ...
    async def queue_positions(self, kinds: list[str] | None = None) -> dict[str, int]: ...


CollectionStatus = Literal["waiting", "parsing", "indexing", "ready", "error"]


@dataclass(frozen=True)
class DatasetRecord:
    id: str
    team_id: str
    name: str
    intro: str
    type: str
    vector_model: str
    agent_model: str
    chunk_settings: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    # vectorModel "auto" only: the first import has yet to settle the model; why auto chose it
    auto_model_pending: bool = False
    auto_model_reason: str | None = None
    parent_id: str | None = None  # the folder it is in (None: the root)
    vlm_model: str = ""  # the vision model describing images ("": none chosen)


@dataclass(frozen=True)
class CollectionRecord:
    id: str
    team_id: str
    dataset_id: str
    name: str
    type: str
    file_id: str | None
    raw_link: str | None
    training_type: str
    chunk_settings: dict[str, Any]
    metadata: dict[str, Any]
    status: CollectionStatus
    error: str | None
    chunks_total: int
    chunks_done: int
    created_at: datetime
    updated_at: datetime
    parent_id: str | None = None
    external_file_id: str | None = None
    tags: tuple[str, ...] = ()  # tag names, in the order set
    forbid: bool = False  # a forbidden collection is left out of every search


@dataclass(frozen=True)
class ChunkToWrite:
    """A chunk and its index texts with their vectors (one per index text), written in one transaction."""

    q: str
    a: str
    chunk_index: int
    index_texts: list[str]
    vectors: list[list[float]]
    index_types: list[str] = field(default_factory=list)
    tokens: int | None = None  # tokens of q + a (the search's token budget reads it); None: count later


@dataclass(frozen=True)
class TrainingItemRecord:
    """A chunk waiting for the dataset's model (``mode`` ``qa`` or ``auto``), or failed (``error`` set)."""

    id: str
    team_id: str
    dataset_id: str
    collection_id: str
    mode: str
    chunk_index: int
    q: str
    a: str
    prompt: str | None
    bill_id: str | None
    error: str | None
    updated_at: datetime


@dataclass(frozen=True)
class ChunkRow:
    id: str
    dataset_id: str
    collection_id: str
    chunk_index: int
    q: str
    a: str
    source_name: str
    updated_at: datetime
    indexes: list[dict[str, Any]] = field(default_factory=list)
    tokens: int | None = None
