"""The chat hot path's storage, in SQLAlchemy Core: a turn's history read in one statement and the turn
written in one transaction (on a SQLite file each in one thread hop, see :meth:`Database.run_write`).

A turn is written twice. When its run starts (:meth:`SqlChatTurnRepository.save_turn`, one transaction of
at most three statements): the chat inserted (``ON CONFLICT`` update, for two first turns racing on one
``chatId``) or updated, the next item number read (not for a chat id made for this turn), the Human item
and the AI item (status ``running``) inserted as one batch. When it ends
(:meth:`SqlChatTurnRepository.finish_turn`, one transaction): the AI item replaced (its value, node
responses, duration; status cleared), the usage records inserted as one batch, and the chat's variables
updated only when the run changed them.
Resuming an interactive reads and updates the paused item at the end instead. While a run goes on, its
replica refreshes the AI item's ``heartbeat_at`` (:meth:`SqlChatTurnRepository.heartbeat`, one statement
for all the replica's runs).
"""

from __future__ import annotations

import functools
from typing import Any, cast

from sqlalchemy import JSON, Connection, Integer, Table, and_, bindparam, func, insert, select, tuple_, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from fathom.store.bound_statements import BoundStatement
from fathom.store.db import Database
from fathom.store.models import Chat, ChatItem, ShareLink, new_id, utcnow
from fathom.store.models import UsageRecord as UsageRow
from fathom.store.protocols import (
    ChatHistory,
    ChatItemRecord,
    ChatRecord,
    ChatTurn,
    Conflict,
    HistoryItem,
    NotFound,
)

_CHATS = cast(Table, Chat.__table__)
_ITEMS = cast(Table, ChatItem.__table__)
_USAGE = cast(Table, UsageRow.__table__)
_LINKS = cast(Table, ShareLink.__table__)
# built once: the hot path binds values only (on a SQLite file straight to the driver, see
# fathom.store.bound_statements)
_CHAT_COLUMNS = (
    "id",
    "chat_id",
    "team_id",
    "app_id",
    "member_id",
    "title",
    "custom_title",
    "top",
    "source",
    "share_id",
    "out_link_uid",
    "owner_kind",
    "api_key_id",
    "variables",
    "metadata",
    "created_at",
    "updated_at",
)
_ITEM_COLUMNS = (
    "id",
    "team_id",
    "app_id",
    "chat_id",
    "data_id",
    "seq",
    "obj",
    "value",
    "response_data",
    "user_good_feedback",
    "user_bad_feedback",
    "duration_seconds",
    "created_at",
    "status",
    "heartbeat_at",
)
_USAGE_COLUMNS = (
    "id",
    "team_id",
    "app_id",
    "api_key_id",
    "source",
    "module_name",
    "model",
    "input_tokens",
    "output_tokens",
    "total_points",
    "created_at",
)
_INSERT_CHAT = BoundStatement(insert(_CHATS), _CHAT_COLUMNS)
_INSERT_ITEMS = BoundStatement(insert(_ITEMS), _ITEM_COLUMNS)
_INSERT_USAGE = BoundStatement(insert(_USAGE), _USAGE_COLUMNS)
_ITEM_KEYS = ("k_team", "k_app", "k_chat", "k_data")
_CHAT_KEYS = ("k_team", "k_app", "k_chat")
# the end of a begun turn: the running answer replaced (status and heartbeat cleared)
_FINISH_ITEM_UPDATE = (
    update(_ITEMS)
    .where(
        _ITEMS.c.team_id == bindparam("k_team"),
        _ITEMS.c.app_id == bindparam("k_app"),
        _ITEMS.c.chat_id == bindparam("k_chat"),
        _ITEMS.c.data_id == bindparam("k_data"),
    )
    .values(
        value=bindparam("n_value", type_=_ITEMS.c.value.type),
        response_data=bindparam("n_response_data", type_=_ITEMS.c.response_data.type),
        duration_seconds=bindparam("n_duration"),
        status=None,
        heartbeat_at=None,
    )
)
_FINISH_ITEM = BoundStatement(_FINISH_ITEM_UPDATE, (*_ITEM_KEYS, "n_value", "n_response_data", "n_duration"))
_LAST_SEQ = BoundStatement(
    select(func.coalesce(func.max(_ITEMS.c.seq), 0)).where(
        _ITEMS.c.app_id == bindparam("app_id"), _ITEMS.c.chat_id == bindparam("chat_id")
    ),
    ("app_id", "chat_id"),
)
# a continued chat's turn: its variables and time set (a turn that also sets the title or metadata
# builds its own statement)
_TOUCH_CHAT_UPDATE = (
    update(_CHATS)
    .where(
        _CHATS.c.team_id == bindparam("k_team"),
        _CHATS.c.app_id == bindparam("k_app"),
        _CHATS.c.chat_id == bindparam("k_chat"),
    )
    .values(
        variables=bindparam("n_variables", type_=_CHATS.c.variables.type),
        updated_at=bindparam("n_updated_at", type_=_CHATS.c.updated_at.type),
    )
)
_TOUCH_CHAT = BoundStatement(_TOUCH_CHAT_UPDATE, (*_CHAT_KEYS, "n_variables", "n_updated_at"))


# A continued chat's history read, built once (the hot path binds values only), in one statement (one
# round trip on PostgreSQL): the chat row, with its newest items as one JSON array of
# ``[seq, data_id, obj, value, status]`` (the columns a run uses, with the status: an unfinished answer
# is no history; ``response_data``, a run's node details and the largest column by far, stays in the
# database), built by the database (SQLite's JSON1, PostgreSQL's json_agg) and decoded once.
_NEWEST_ITEMS = (
    select(_ITEMS.c.seq, _ITEMS.c.data_id, _ITEMS.c.obj, _ITEMS.c.value, _ITEMS.c.status)
    .where(
        _ITEMS.c.team_id == bindparam("team_id"),
        _ITEMS.c.app_id == bindparam("app_id"),
        _ITEMS.c.chat_id == bindparam("chat_id"),
    )
    .order_by(_ITEMS.c.seq.desc())
    .limit(bindparam("limit", type_=Integer))
    .subquery("newest")
)
_NEWEST = _NEWEST_ITEMS.c
_ITEMS_ARRAY = {
    "sqlite": func.json_group_array(
        func.json_array(_NEWEST.seq, _NEWEST.data_id, _NEWEST.obj, func.json(_NEWEST.value), _NEWEST.status),
        type_=JSON,
    ),
    "postgresql": func.json_agg(
        func.json_build_array(_NEWEST.seq, _NEWEST.data_id, _NEWEST.obj, _NEWEST.value, _NEWEST.status),
        type_=JSON,
    ),
}
_HISTORY = {
    dialect: select(_CHATS, select(array).scalar_subquery().label("history_items")).where(
        _CHATS.c.team_id == bindparam("team_id"),
        _CHATS.c.app_id == bindparam("app_id"),
        _CHATS.c.chat_id == bindparam("chat_id"),
    )
    for dialect, array in _ITEMS_ARRAY.items()
}
_HISTORY_ON_SQLITE = BoundStatement(_HISTORY["sqlite"], ("team_id", "app_id", "chat_id", "limit"))


def _read_history(conn: Connection, team_id: str, app_id: str, chat_id: str, limit: int) -> ChatHistory:
    """The chat and its newest ``limit`` items (data id, obj, value, status), oldest first."""
    where = {"team_id": team_id, "app_id": app_id, "chat_id": chat_id, "limit": limit}
    if conn.dialect.name == "sqlite":
        found = _HISTORY_ON_SQLITE.first(conn, where)
        chat = None if found is None else found._asdict()
    else:
        chat = conn.execute(_HISTORY[conn.dialect.name], where).mappings().first()
    if chat is None:
        return ChatHistory(None, [])
    rows = sorted(chat["history_items"] or [], key=lambda row: row[0])  # the aggregate's order is unsaid
    return ChatHistory(
        _chat_from_row(chat),
        [HistoryItem(row[1], row[2], list(row[3] or []), row[4]) for row in rows],
    )


def _chat_from_row(row: Any) -> ChatRecord:
    return ChatRecord(
        chat_id=row["chat_id"],
        app_id=row["app_id"],
        team_id=row["team_id"],
        title=row["title"],
        custom_title=row["custom_title"],
        top=bool(row["top"]),
        source=row["source"],
        variables=dict(row["variables"] or {}),
        metadata=dict(row["metadata"] or {}),
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        share_id=row["share_id"],
        out_link_uid=row["out_link_uid"],
        owner_kind=row["owner_kind"],
        member_id=row["member_id"],
        api_key_id=row["api_key_id"],
    )


def _touch_chat(conn: Connection, turn: ChatTurn, now: Any) -> Any:
    """The turn's chat row: its variables and time set (``_TOUCH_CHAT``, bound values only)."""
    keys = {"k_team": turn.team_id, "k_app": turn.app_id, "k_chat": turn.chat_id}
    return _TOUCH_CHAT.execute(conn, {**keys, "n_variables": turn.variables, "n_updated_at": now})


def _chat_where(team_id: str, app_id: str, chat_id: str) -> tuple[Any, ...]:
    return (_CHATS.c.team_id == team_id, _CHATS.c.app_id == app_id, _CHATS.c.chat_id == chat_id)


# the columns that name a chat's owner, by owner kind (``fathom.chat.ownership``); any other kind is "member"
_OWNER_COLUMNS = {"member": ("member_id",), "key": ("api_key_id",), "visitor": ("share_id", "out_link_uid")}


def _owner_kind(kind: str) -> str:
    return kind if kind in _OWNER_COLUMNS else "member"


def owner_conditions(
    kind: str,
    *,
    member_id: str | None = None,
    api_key_id: str | None = None,
    share_id: str | None = None,
    out_link_uid: str | None = None,
) -> list[Any]:
    """The conditions that select the chats of one owner (``fathom.chat.ownership``)."""
    given = {
        "member_id": member_id,
        "api_key_id": api_key_id,
        "share_id": share_id,
        "out_link_uid": out_link_uid,
    }
    kind = _owner_kind(kind)
    return [
        _CHATS.c.owner_kind == kind,
        *(_CHATS.c[column] == given[column] for column in _OWNER_COLUMNS[kind]),
    ]


@functools.cache
def _upsert_chat(dialect: str, kind: str) -> BoundStatement:
    """A first turn's chat row under a chatId the caller chose: inserted, or, when a turn of the same
    owner (``kind``, one of ``_OWNER_COLUMNS``) stored it first, its variables and time updated; returns
    the row's id, or no row for another owner's chat (left as it was). Not ``rowcount``: SQLAlchemy's
    psycopg driver reports -1 for an ``INSERT``. Built once per dialect and owner kind, the owner's
    columns bound as ``o_<column>``; compared by ``IS`` / ``IS NOT DISTINCT FROM``, a missing value
    matching a missing one as :func:`owner_conditions`' ``IS NULL`` does."""
    statement = (pg_insert if dialect == "postgresql" else sqlite_insert)(_CHATS)
    owner = [_CHATS.c.owner_kind == kind] + [
        _CHATS.c[column].is_not_distinct_from(bindparam(f"o_{column}", type_=_CHATS.c[column].type))
        for column in _OWNER_COLUMNS[kind]
    ]
    upsert = statement.on_conflict_do_update(
        index_elements=["app_id", "chat_id"],
        set_={"variables": statement.excluded.variables, "updated_at": statement.excluded.updated_at},
        where=and_(*owner),
    ).returning(_CHATS.c.id)
    return BoundStatement(upsert, (*_CHAT_COLUMNS, *(f"o_{column}" for column in _OWNER_COLUMNS[kind])))


def _items_where(team_id: str, app_id: str, chat_id: str) -> tuple[Any, ...]:
    return (_ITEMS.c.team_id == team_id, _ITEMS.c.app_id == app_id, _ITEMS.c.chat_id == chat_id)


class SqlChatTurnRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def load_history(self, team_id: str, app_id: str, chat_id: str, limit: int) -> ChatHistory:
        """The chat and its newest ``limit`` items as a run's history, oldest first (one statement)."""
        return await self.db.run_read(lambda conn: _read_history(conn, team_id, app_id, chat_id, limit))

    async def has_item(self, team_id: str, app_id: str, chat_id: str, data_id: str) -> bool:
        query = select(_ITEMS.c.id).where(
            *_items_where(team_id, app_id, chat_id), _ITEMS.c.data_id == data_id
        )
        return await self.db.run_read(lambda conn: conn.execute(query.limit(1)).first() is not None)

    async def save_turn(self, turn: ChatTurn) -> None:
        """Store the whole turn in one transaction (nothing of it when any statement fails)."""
        await self.db.run_write(lambda conn: self._save(conn, turn))

    def _save(self, conn: Connection, turn: ChatTurn) -> None:
        now = utcnow()
        self._save_chat(conn, turn, now)
        if turn.resumed is not None:
            self._extend_item(conn, turn, turn.resumed)
        if turn.items:
            seq = 0
            if not turn.chat_id_generated:
                seq = int(_LAST_SEQ.first(conn, {"app_id": turn.app_id, "chat_id": turn.chat_id})[0])
            rows = [
                {
                    "id": new_id(),
                    "team_id": turn.team_id,
                    "app_id": turn.app_id,
                    "chat_id": turn.chat_id,
                    "data_id": item.data_id,
                    "seq": seq + number,
                    "obj": item.obj,
                    "value": item.value,
                    "response_data": item.response_data,
                    "user_good_feedback": item.user_good_feedback,
                    "user_bad_feedback": item.user_bad_feedback,
                    "duration_seconds": item.duration_seconds,
                    "created_at": now,
                    "status": item.status,
                    "heartbeat_at": now if item.status is not None else None,
                }
                for number, item in enumerate(turn.items, start=1)
            ]
            _INSERT_ITEMS.execute(conn, rows)
        self._save_usage(conn, turn, now)

    def _save_usage(self, conn: Connection, turn: ChatTurn, now: Any) -> None:
        if turn.usages:
            _INSERT_USAGE.execute(
                conn,
                [
                    {
                        "id": new_id(),
                        "team_id": usage.team_id,
                        "app_id": usage.app_id,
                        "api_key_id": usage.api_key_id,
                        "source": usage.source,
                        "module_name": usage.module_name,
                        "model": usage.model,
                        "input_tokens": usage.input_tokens,
                        "output_tokens": usage.output_tokens,
                        "total_points": usage.total_points,
                        "created_at": usage.created_at or now,
                    }
                    for usage in turn.usages
                ],
            )
        if turn.share_link_id is not None:  # the link's points, in the turn's own transaction
            points = sum(usage.total_points for usage in turn.usages)
            conn.execute(
                update(_LINKS)
                .where(_LINKS.c.id == turn.share_link_id)
                .values(usage_points=_LINKS.c.usage_points + points, last_time=now)
            )

    async def finish_turn(self, turn: ChatTurn, answer: ChatItemRecord, *, variables_changed: bool) -> bool:
        """The end of a turn stored by :meth:`save_turn` at its start, in one transaction: the chat's
        variables when the run changed them, ``answer`` replacing the running AI item (status cleared)
        and the usage records; a run without usage or new variables is one statement. False when the
        item is gone (its chat deleted while the run went on): the usage is stored all the same."""
        alone = not variables_changed and not turn.usages and turn.share_link_id is None  # see _finish
        return await self.db.run_write(
            lambda conn: self._finish(conn, turn, answer, variables_changed), one_statement=alone
        )

    def _finish(
        self, conn: Connection, turn: ChatTurn, answer: ChatItemRecord, variables_changed: bool
    ) -> bool:
        now = utcnow()
        if variables_changed:
            _touch_chat(conn, turn, now)
        replaced = _FINISH_ITEM.execute(
            conn,
            {
                "k_team": turn.team_id,
                "k_app": turn.app_id,
                "k_chat": turn.chat_id,
                "k_data": answer.data_id,
                "n_value": answer.value,
                "n_response_data": answer.response_data,
                "n_duration": answer.duration_seconds,
            },
        )
        self._save_usage(conn, turn, now)
        return bool(replaced.rowcount)

    async def heartbeat(self, items: list[tuple[str, str, str]]) -> None:
        """Refresh the heartbeat of the running AI items ``(app id, chat id, data id)`` (one statement)."""
        if not items:
            return
        statement = (
            update(_ITEMS)
            .where(
                tuple_(_ITEMS.c.app_id, _ITEMS.c.chat_id, _ITEMS.c.data_id).in_(items),
                _ITEMS.c.status == "running",
            )
            .values(heartbeat_at=utcnow())
        )
        await self.db.run_write(lambda conn: conn.execute(statement).rowcount, one_statement=True)

    def _save_chat(self, conn: Connection, turn: ChatTurn, now: Any) -> None:
        if turn.new_chat:
            values = {
                "id": new_id(),
                "chat_id": turn.chat_id,
                "team_id": turn.team_id,
                "app_id": turn.app_id,
                "member_id": turn.member_id,
                "title": turn.title or "",
                "custom_title": "",
                "top": False,
                "source": turn.source,
                "share_id": turn.share_id,
                "out_link_uid": turn.out_link_uid,
                "owner_kind": turn.owner_kind,
                "api_key_id": turn.api_key_id,
                "variables": turn.variables,
                "metadata": turn.metadata or {},
                "created_at": now,
                "updated_at": now,
            }
            if turn.chat_id_generated:
                _INSERT_CHAT.execute(conn, values)
                return
            # a first turn racing another on the same chatId: the later one updates, when both are the
            # same owner's; another owner's turn is refused (nothing of it is stored)
            kind = _owner_kind(turn.owner_kind)
            owner = {f"o_{column}": getattr(turn, column) for column in _OWNER_COLUMNS[kind]}
            if _upsert_chat(conn.dialect.name, kind).first(conn, {**values, **owner}) is None:
                raise Conflict(f"chatId: chat {turn.chat_id} belongs to another caller; start a new chat")
            return
        if not turn.metadata and turn.title is None:  # the usual continued turn: bound values only
            result = _touch_chat(conn, turn, now)
        else:
            changes: dict[str, Any] = {"variables": turn.variables, "updated_at": now}
            where = _chat_where(turn.team_id, turn.app_id, turn.chat_id)
            if turn.metadata:
                old = conn.execute(select(_CHATS.c.metadata).where(*where)).scalar_one_or_none()
                changes["metadata"] = {**(old or {}), **turn.metadata}
            if turn.title is not None:
                changes["title"] = turn.title
            result = conn.execute(update(_CHATS).where(*where).values(changes))
        if result.rowcount == 0:
            raise NotFound(f"chat {turn.chat_id} not found")

    def _extend_item(self, conn: Connection, turn: ChatTurn, item: ChatItemRecord) -> None:
        where = (*_items_where(turn.team_id, turn.app_id, turn.chat_id), _ITEMS.c.data_id == item.data_id)
        old = conn.execute(select(_ITEMS.c.response_data, _ITEMS.c.duration_seconds).where(*where)).first()
        if old is None:
            raise NotFound(f"chat item {item.data_id} not found")
        conn.execute(
            update(_ITEMS)
            .where(*where)
            .values(
                value=item.value,
                response_data=[*(old.response_data or []), *item.response_data],
                duration_seconds=(old.duration_seconds or 0.0) + (item.duration_seconds or 0.0),
            )
        )
