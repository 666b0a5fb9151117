"""Apps, chats, chat turns, share links and chat logs: the records and repositories of ``fathom.chat``.

Imports no database library (see :mod:`fathom.store.protocols`, which re-exports these names); the SQL
implementations are in ``fathom.store.repositories``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol

from fathom.store.usage_protocols import UsageRecord


@dataclass(frozen=True)
class AppRecord:
    """An app. ``stored_draft`` is the draft graph as stored: a dict, or its JSON text as read, decoded the
    first time ``draft`` is asked for (a chat runs the published version and never asks: a FastGPT
    app's draft is 6–85 KB of JSON, 30–380 µs to decode, on every chat request's read of the app)."""

    id: str
    team_id: str
    name: str
    type: str
    intro: str
    avatar: str
    stored_draft: dict[str, Any] | str = field(repr=False)
    published_version_id: str | None
    created_at: datetime
    updated_at: datetime

    @property
    def draft(self) -> dict[str, Any]:
        value = self.stored_draft
        if isinstance(value, str):
            decoded = json.loads(value) if value else None
            value = dict(decoded) if isinstance(decoded, dict) else {}
            object.__setattr__(self, "stored_draft", value)  # decoded once; the record stays frozen outside
        return value


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
