"""An app's chat logs in SQL (FastGPT's ``getChatLogs`` / ``exportChatLogs``): the conversations of
every channel filtered by channel, last-activity date, title and feedback, with per-conversation counts
and their owners' names (``fathom.chat.chat_logs`` is the use case)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import and_, case, exists, func, or_, select

from fathom.store.db import Database
from fathom.store.models import ApiKey, Chat, ChatItem, Member
from fathom.store.protocols import ChatItemRecord, ChatLogEntry, ChatLogQuery
from fathom.store.repositories.chats import chat_record, item_record


def _like(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _has(column: Any) -> Any:
    return exists().where(
        ChatItem.app_id == Chat.app_id, ChatItem.chat_id == Chat.chat_id, column.is_not(None)
    )


def _where(team_id: str, app_id: str, query: ChatLogQuery) -> list[Any]:
    where: list[Any] = [
        Chat.team_id == team_id,
        Chat.app_id == app_id,
        Chat.updated_at >= query.date_start,
        Chat.updated_at <= query.date_end,
    ]
    if query.sources:
        where.append(Chat.source.in_(query.sources))
    if query.search:
        pattern = _like(query.search)
        where.append(
            or_(
                Chat.title.ilike(pattern, escape="\\"),
                Chat.custom_title.ilike(pattern, escape="\\"),
                Chat.chat_id.ilike(pattern, escape="\\"),
            )
        )
    if query.feedback == "good":
        where.append(_has(ChatItem.user_good_feedback))
    elif query.feedback == "bad":
        where.append(_has(ChatItem.user_bad_feedback))
    elif query.feedback == "has_feedback":
        where.append(or_(_has(ChatItem.user_good_feedback), _has(ChatItem.user_bad_feedback)))
    elif query.feedback == "marked":
        where.append(_has(ChatItem.admin_feedback))
    return where


class SqlChatLogRepository:
    """SQL over ``chats`` and ``chat_items`` for the log pages: one statement for the page of chats, one
    for their counts."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def page(
        self, team_id: str, app_id: str, query: ChatLogQuery, *, offset: int, limit: int
    ) -> tuple[list[ChatLogEntry], int]:
        """Most recently active first; the total counts every match."""
        where = _where(team_id, app_id, query)
        async with self.db.sessions() as session:
            total = int(await session.scalar(select(func.count()).select_from(Chat).where(*where)) or 0)
            rows = list(
                await session.scalars(
                    select(Chat)
                    .where(*where)
                    .order_by(Chat.updated_at.desc(), Chat.id.desc())
                    .offset(offset)
                    .limit(limit)
                )
            )
            counts = await self._counts(session, team_id, app_id, [r.chat_id for r in rows])
            names = await self._owner_names(session, rows)
        return [self._entry(row, counts.get(row.chat_id), names) for row in rows], total

    async def _owner_names(self, session: Any, rows: list[Chat]) -> dict[tuple[str, str], str]:
        """The names of the chats' owners: members and keys read in one statement each."""
        members = {r.member_id for r in rows if r.owner_kind == "member" and r.member_id}
        keys = {r.api_key_id for r in rows if r.owner_kind == "key" and r.api_key_id}
        names: dict[tuple[str, str], str] = {}
        if members:
            found = await session.execute(select(Member.id, Member.name).where(Member.id.in_(members)))
            names.update({("member", row.id): row.name for row in found})
        if keys:
            found = await session.execute(select(ApiKey.id, ApiKey.name).where(ApiKey.id.in_(keys)))
            names.update({("key", row.id): row.name for row in found})
        return names

    async def _counts(self, session: Any, team_id: str, app_id: str, chat_ids: list[str]) -> dict[str, Any]:
        if not chat_ids:
            return {}
        statement = (
            select(
                ChatItem.chat_id,
                func.count().label("messages"),
                func.count(ChatItem.user_good_feedback).label("good"),
                func.count(ChatItem.user_bad_feedback).label("bad"),
                func.count(ChatItem.admin_feedback).label("marks"),
                func.avg(case((ChatItem.obj == "AI", ChatItem.duration_seconds))).label("response_time"),
            )
            .where(ChatItem.team_id == team_id, ChatItem.app_id == app_id, ChatItem.chat_id.in_(chat_ids))
            .group_by(ChatItem.chat_id)
        )
        return {row.chat_id: row for row in (await session.execute(statement)).all()}

    @staticmethod
    def _entry(row: Chat, counts: Any, names: dict[tuple[str, str], str]) -> ChatLogEntry:
        average = counts.response_time if counts is not None else None
        if row.owner_kind == "visitor":
            owner_name = row.out_link_uid or ""
        else:
            owner_id = row.api_key_id if row.owner_kind == "key" else row.member_id
            owner_name = names.get((row.owner_kind, owner_id or ""), "")
        return ChatLogEntry(
            chat=chat_record(row),
            member_id=row.member_id,
            message_count=int(counts.messages) if counts is not None else 0,
            good_count=int(counts.good) if counts is not None else 0,
            bad_count=int(counts.bad) if counts is not None else 0,
            mark_count=int(counts.marks) if counts is not None else 0,
            average_response_time=round(float(average), 3) if average is not None else None,
            owner_name=owner_name,
        )

    async def feedback_items(
        self, team_id: str, app_id: str, chat_ids: Sequence[str]
    ) -> dict[str, list[ChatItemRecord]]:
        """The items of these chats that carry user feedback or an owner's mark, oldest first."""
        if not chat_ids:
            return {}
        marked = or_(
            ChatItem.user_good_feedback.is_not(None),
            ChatItem.user_bad_feedback.is_not(None),
            ChatItem.admin_feedback.is_not(None),
        )
        async with self.db.sessions() as session:
            rows = await session.scalars(
                select(ChatItem)
                .where(
                    and_(ChatItem.team_id == team_id, ChatItem.app_id == app_id),
                    ChatItem.chat_id.in_(list(chat_ids)),
                    marked,
                )
                .order_by(ChatItem.chat_id, ChatItem.seq)
            )
            found: dict[str, list[ChatItemRecord]] = {}
            for row in rows:
                found.setdefault(row.chat_id, []).append(item_record(row))
            return found
