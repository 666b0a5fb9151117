"""Repositories named in domain terms, as Protocols over plain records.

This module imports no database library: domain packages may depend on it. The SQL implementation
(``fathom.store.repositories``) serves SQLite and PostgreSQL alike and passes the same conformance suite.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol

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


@dataclass(frozen=True)
class AppRecord:
    id: str
    team_id: str
    name: str
    type: str
    intro: str
    avatar: str
    draft: dict[str, Any]
    published_version_id: str | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class AppVersionRecord:
    id: str
    app_id: str
    version_name: str
    nodes: list[Any]
    edges: list[Any]
    chat_config: dict[str, Any]
    is_publish: bool
    created_at: datetime


@dataclass(frozen=True)
class ChatRecord:
    chat_id: str
    app_id: str
    team_id: str
    title: str
    custom_title: str
    top: bool
    source: str
    variables: dict[str, Any]
    metadata: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    share_id: str | None = None  # the share link a visitor chatted through
    out_link_uid: str | None = None  # ... and which visitor
    # the owner (fathom.chat.ownership): "member" (member_id), "key" (api_key_id) or "visitor"
    owner_kind: str = "member"
    member_id: str | None = None  # the member the chat's runs act as (a key's creator, a link's maker)
    api_key_id: str | None = None  # the key that owns a key's chat


@dataclass(frozen=True)
class ChatItemRecord:
    data_id: str
    chat_id: str
    app_id: str
    obj: str
    value: list[Any]
    response_data: list[Any] = field(default_factory=list)
    user_good_feedback: str | None = None
    user_bad_feedback: str | None = None
    duration_seconds: float | None = None
    created_at: datetime | None = None
    admin_feedback: dict[str, Any] | None = None
    status: str | None = None  # ``running`` until its run finished it (see ``chat_item_state``)
    heartbeat_at: datetime | None = None


@dataclass(frozen=True)
class UsageRecord:
    team_id: str
    app_id: str | None
    source: str
    module_name: str
    model: str
    input_tokens: int
    output_tokens: int
    total_points: float
    api_key_id: str | None = None
    created_at: datetime | None = None
    bill_id: str | None = None  # the training bill (``createTrainingUsage``) it belongs to


@dataclass(frozen=True)
class ChatTurn:
    """One chat turn, stored in one transaction: the chat created or updated, the new items appended
    (or, resuming an interactive, the paused AI item extended) and the turn's usage records."""

    team_id: str
    app_id: str
    chat_id: str
    new_chat: bool  # the chat did not exist when the turn started
    variables: dict[str, Any]
    source: str = "api"
    title: str | None = None  # set on a new chat
    metadata: dict[str, Any] | None = None  # merged into the chat's metadata
    member_id: str | None = None  # who started a new chat
    chat_id_generated: bool = False  # the id was made for this turn: nothing can be stored under it
    items: tuple[ChatItemRecord, ...] = ()
    resumed: ChatItemRecord | None = None  # value extended; response data and duration are added on
    usages: tuple[UsageRecord, ...] = ()
    share_link_id: str | None = None  # a visitor's turn: the link's points grow by the turn's usage
    share_id: str | None = None  # set on a new chat, with ``out_link_uid``
    out_link_uid: str | None = None
    owner_kind: str = "member"  # set on a new chat: who owns it (fathom.chat.ownership)
    api_key_id: str | None = None  # ... the key, for a key's chat


@dataclass(frozen=True)
class ShareLinkRecord:
    """A share link (FastGPT's outLink) of an app, with its limits and the points its chats spent.

    ``qpm`` 0 and ``max_usage_points`` -1 mean no limit; an empty ``hook_url`` means no auth hook.
    ``allowed_origins`` are the sites whose pages may show the share page in a frame (none: only Fathom's
    own pages)."""

    id: str
    share_id: str
    team_id: str
    app_id: str
    member_id: str
    type: str
    name: str
    response_detail: bool
    show_node_status: bool
    show_raw_source: bool
    expired_time: datetime | None
    qpm: int
    max_usage_points: float
    hook_url: str
    usage_points: float
    last_time: datetime | None
    created_at: datetime
    allowed_origins: tuple[str, ...] = ()


#: a share link's requests a minute per visitor when none is given, the same from the API and the console
#: (FastGPT's schema default is 1000; a public link is safer with a per-person rate)
DEFAULT_SHARE_QPM = 60


@dataclass(frozen=True)
class ShareLinkSettings:
    """What the owner sets on a share link (create and update)."""

    name: str
    response_detail: bool = False
    show_node_status: bool = False
    show_raw_source: bool = False
    expired_time: datetime | None = None
    qpm: int = DEFAULT_SHARE_QPM
    max_usage_points: float = -1.0
    hook_url: str = ""
    allowed_origins: tuple[str, ...] = ()


class ShareLinkRepository(Protocol):
    async def create_link(
        self,
        team_id: str,
        app_id: str,
        member_id: str,
        share_id: str,
        link_type: str,
        settings: ShareLinkSettings,
    ) -> ShareLinkRecord: ...

    async def list_links(self, team_id: str, app_id: str, link_type: str | None) -> list[ShareLinkRecord]: ...

    async def get_link(self, team_id: str, link_id: str) -> ShareLinkRecord: ...

    async def find_by_share_id(self, share_id: str) -> ShareLinkRecord | None: ...

    async def update_link(
        self, team_id: str, link_id: str, settings: ShareLinkSettings
    ) -> ShareLinkRecord: ...

    async def delete_link(self, team_id: str, link_id: str) -> None: ...

    async def count_hit(self, link_id: str, out_link_uid: str, qpm: int) -> bool: ...


@dataclass(frozen=True)
class HistoryItem:
    """A stored chat item as a run's history sees it: the columns a run uses (not its response data, its
    feedback or its timings: read those with the chat's item list). ``status``: ``running`` for an
    answer not finished yet (another request's, or one whose replica died), None when finished."""

    data_id: str
    obj: str
    value: list[Any]
    status: str | None = None


@dataclass(frozen=True)
class ChatHistory:
    """A chat and the newest ``limit`` of its items, oldest first (``chat`` None: no such chat)."""

    chat: ChatRecord | None
    items: list[HistoryItem]


@dataclass(frozen=True)
class UsageSummaryRow:
    day: str
    app_id: str | None
    input_tokens: int
    output_tokens: int
    total_points: float
    records: int


@dataclass(frozen=True)
class TrainingBillRecord:
    """A training bill: ``createTrainingUsage``'s answer is its id (FastGPT's ``billId``)."""

    id: str
    team_id: str
    dataset_id: str
    name: str
    created_at: datetime


@dataclass(frozen=True)
class BillTotals:
    """The usage records of one training bill, summed."""

    bill_id: str
    name: str
    dataset_id: str
    input_tokens: int
    total_points: float
    records: int
    output_tokens: int = 0  # a model's answers (qa / auto-index training); embeddings have none


class TeamRepository(Protocol):
    async def create_team(self, name: str) -> TeamRecord: ...
    async def get_team(self, team_id: str) -> TeamRecord: ...
    async def count_teams(self) -> int: ...
    async def add_member(self, team_id: str, name: str, role: Role = "member") -> MemberRecord: ...
    async def get_member(self, member_id: str) -> MemberRecord: ...
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


class AppRepository(Protocol):
    async def create_app(
        self,
        team_id: str,
        name: str,
        *,
        type: str = "simple",
        intro: str = "",
        draft: dict[str, Any] | None = None,
    ) -> AppRecord: ...
    async def get_app(self, team_id: str, app_id: str) -> AppRecord: ...
    async def get_app_and_owner(self, team_id: str, app_id: str) -> tuple[AppRecord, str | None]: ...
    async def list_apps(self, team_id: str) -> list[AppRecord]: ...
    async def update_app(self, team_id: str, app_id: str, **changes: Any) -> AppRecord: ...
    async def delete_app(self, team_id: str, app_id: str) -> None: ...
    async def publish(
        self,
        team_id: str,
        app_id: str,
        *,
        nodes: list[Any],
        edges: list[Any],
        chat_config: dict[str, Any],
        version_name: str = "",
    ) -> AppVersionRecord: ...
    async def list_versions(self, team_id: str, app_id: str) -> list[AppVersionRecord]: ...
    async def get_version(self, team_id: str, app_id: str, version_id: str) -> AppVersionRecord: ...


class ChatOwner(Protocol):
    """Whose chats a listing selects (``fathom.chat.ownership.ChatCaller`` is one): the owner kind
    (``member``, ``key``, ``visitor``; None is nobody, who owns no chat) and the ids that name it."""

    @property
    def kind(self) -> str | None: ...
    @property
    def member_id(self) -> str | None: ...
    @property
    def api_key_id(self) -> str | None: ...
    @property
    def share_id(self) -> str | None: ...
    @property
    def out_link_uid(self) -> str | None: ...


class AppOwnerRepository(Protocol):
    """Who created an app (the member its creator rule and ownership checks name)."""

    async def set_owner(self, app_id: str, member_id: str) -> None: ...
    async def owner_of(self, app_id: str) -> str | None: ...


#: FastGPT's ``feedbackType`` values, plus Fathom's ``marked`` (answers the owner marked)
FeedbackFilter = Literal["all", "has_feedback", "good", "bad", "marked"]


@dataclass(frozen=True)
class ChatLogQuery:
    """Which conversations of an app a log page or an export shows."""

    date_start: datetime
    date_end: datetime
    sources: tuple[str, ...] | None = None
    feedback: FeedbackFilter = "all"
    search: str | None = None


@dataclass(frozen=True)
class ChatLogEntry:
    """One conversation of the log and its counts."""

    chat: ChatRecord
    member_id: str | None
    message_count: int
    good_count: int
    bad_count: int
    mark_count: int
    average_response_time: float | None
    owner_name: str = ""  # the owner's name: the member's, the key's, or the visitor's uid


class ChatLogRepository(Protocol):
    """An app's conversations as the owner's log pages read them."""

    async def page(
        self, team_id: str, app_id: str, query: ChatLogQuery, *, offset: int, limit: int
    ) -> tuple[list[ChatLogEntry], int]: ...
    async def feedback_items(
        self, team_id: str, app_id: str, chat_ids: Sequence[str]
    ) -> dict[str, list[ChatItemRecord]]: ...


class ChatRepository(Protocol):
    async def get_chat(self, team_id: str, app_id: str, chat_id: str) -> ChatRecord | None: ...
    async def upsert_chat(
        self,
        team_id: str,
        app_id: str,
        chat_id: str,
        *,
        title: str | None = None,
        variables: dict[str, Any] | None = None,
        source: str = "api",
        metadata: dict[str, Any] | None = None,
    ) -> ChatRecord: ...
    async def list_chats(
        self,
        team_id: str,
        app_id: str,
        *,
        owner: ChatOwner | None = None,
        source: str | None = None,
        exclude_source: str | None = None,
        since: datetime | None = None,
        offset: int = 0,
        limit: int = 20,
    ) -> tuple[list[ChatRecord], int]: ...
    async def update_chat(self, team_id: str, app_id: str, chat_id: str, **changes: Any) -> None: ...
    async def clear_chats(self, team_id: str, app_id: str, *, source: str, owner: ChatOwner) -> list[str]: ...
    async def delete_chat(self, team_id: str, app_id: str, chat_id: str) -> None: ...
    async def add_item(self, team_id: str, item: ChatItemRecord) -> ChatItemRecord: ...
    async def update_item(
        self, team_id: str, app_id: str, chat_id: str, data_id: str, **changes: Any
    ) -> None: ...
    async def list_items(
        self, team_id: str, app_id: str, chat_id: str, *, offset: int = 0, limit: int = 50
    ) -> tuple[list[ChatItemRecord], int]: ...
    async def delete_item(self, team_id: str, app_id: str, chat_id: str, data_id: str) -> None: ...


class ChatTurnRepository(Protocol):
    """The chat hot path's storage: the history a turn reads, and the turn written in one transaction."""

    async def load_history(self, team_id: str, app_id: str, chat_id: str, limit: int) -> ChatHistory: ...
    async def has_item(self, team_id: str, app_id: str, chat_id: str, data_id: str) -> bool: ...
    async def save_turn(self, turn: ChatTurn) -> None: ...
    async def finish_turn(
        self, turn: ChatTurn, answer: ChatItemRecord, *, variables_changed: bool
    ) -> bool: ...
    async def heartbeat(self, items: list[tuple[str, str, str]]) -> None: ...


class UsageRepository(Protocol):
    async def record(self, usage: UsageRecord) -> None: ...
    async def summarize(
        self, team_id: str, *, app_id: str | None = None, days: int = 30
    ) -> list[UsageSummaryRow]: ...


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
