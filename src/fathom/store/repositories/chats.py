"""Chats (one per ``chatId`` within an app) and their items, in insertion order."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from sqlalchemy import delete, false, func, select, update
from sqlalchemy.exc import IntegrityError

from fathom.store.db import Database
from fathom.store.models import Chat, ChatItem, utcnow
from fathom.store.protocols import ChatItemRecord, ChatOwner, ChatRecord, Conflict, NotFound
from fathom.store.repositories.chat_turns import owner_conditions

_ITEM_FIELDS = {
    "value",
    "response_data",
    "user_good_feedback",
    "user_bad_feedback",
    "admin_feedback",
    "duration_seconds",
}


def chat_record(row: Chat) -> ChatRecord:
    return ChatRecord(
        chat_id=row.chat_id,
        app_id=row.app_id,
        team_id=row.team_id,
        title=row.title,
        custom_title=row.custom_title,
        top=row.top,
        source=row.source,
        variables=dict(row.variables or {}),
        metadata=dict(row.metadata_ or {}),
        created_at=row.created_at,
        updated_at=row.updated_at,
        share_id=row.share_id,
        out_link_uid=row.out_link_uid,
        owner_kind=row.owner_kind,
        member_id=row.member_id,
        api_key_id=row.api_key_id,
    )


def item_record(row: ChatItem) -> ChatItemRecord:
    return ChatItemRecord(
        data_id=row.data_id,
        chat_id=row.chat_id,
        app_id=row.app_id,
        obj=row.obj,
        value=list(row.value or []),
        response_data=list(row.response_data or []),
        user_good_feedback=row.user_good_feedback,
        user_bad_feedback=row.user_bad_feedback,
        duration_seconds=row.duration_seconds,
        created_at=row.created_at,
        admin_feedback=dict(row.admin_feedback) if row.admin_feedback else None,
        status=row.status,
        heartbeat_at=row.heartbeat_at,
    )


def _owned_by(owner: ChatOwner) -> list[Any]:
    """The conditions that select ``owner``'s own chats (``ChatCaller.owns`` as SQL, through the one
    ownership rule of :func:`owner_conditions`); nobody's (an expired link's visitor) selects none."""
    if owner.kind is None:
        return [false()]
    return owner_conditions(
        owner.kind,
        member_id=owner.member_id,
        api_key_id=owner.api_key_id,
        share_id=owner.share_id,
        out_link_uid=owner.out_link_uid,
    )


class SqlChatRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def get_chat(self, team_id: str, app_id: str, chat_id: str) -> ChatRecord | None:
        async with self.db.sessions() as session:
            row = await session.scalar(select(Chat).where(Chat.app_id == app_id, Chat.chat_id == chat_id))
            if row is None or row.team_id != team_id:
                return None
            return chat_record(row)

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
    ) -> ChatRecord:
        """Create the chat or update its title/variables/metadata; another team's chat id is NotFound."""
        async with self.db.transaction() as session:
            row = await session.scalar(select(Chat).where(Chat.app_id == app_id, Chat.chat_id == chat_id))
            if row is not None and row.team_id != team_id:
                raise NotFound(f"chat {chat_id} not found")
            if row is None:
                row = Chat(team_id=team_id, app_id=app_id, chat_id=chat_id, source=source, title=title or "")
                row.variables = variables or {}
                row.metadata_ = metadata or {}
                session.add(row)
            else:
                if title is not None:
                    row.title = title
                if variables is not None:
                    row.variables = variables
                if metadata is not None:
                    row.metadata_ = {**(row.metadata_ or {}), **metadata}
                row.updated_at = utcnow()
            await session.flush()
            return chat_record(row)

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
    ) -> tuple[list[ChatRecord], int]:
        """The app's chats, pinned first, then most recently updated, and how many match. ``owner``
        keeps that owner's own chats (an owner of kind None, nobody, keeps none); ``source`` keeps one
        source, ``exclude_source`` leaves one out, ``since`` keeps chats updated since then."""
        where: list[Any] = [Chat.team_id == team_id, Chat.app_id == app_id]
        if source:
            where.append(Chat.source == source)
        if exclude_source:
            where.append(Chat.source != exclude_source)
        if owner is not None:
            where += _owned_by(owner)
        if since is not None:
            where.append(Chat.updated_at >= since)
        async with self.db.sessions() as session:
            total = int(await session.scalar(select(func.count()).select_from(Chat).where(*where)) or 0)
            rows = await session.scalars(
                select(Chat)
                .where(*where)
                .order_by(Chat.top.desc(), Chat.updated_at.desc(), Chat.id.desc())
                .offset(offset)
                .limit(limit)
            )
            return [chat_record(row) for row in rows], total

    async def update_chat(self, team_id: str, app_id: str, chat_id: str, **changes: Any) -> None:
        """Set ``title``, ``custom_title``, ``top`` and/or ``member_id``; bumps ``updated_at``; unknown chat
        is NotFound."""
        async with self.db.transaction() as session:
            result = await session.execute(
                update(Chat)
                .where(Chat.team_id == team_id, Chat.app_id == app_id, Chat.chat_id == chat_id)
                .values(**changes, updated_at=utcnow())
            )
            if result.rowcount == 0:  # type: ignore[attr-defined]
                raise NotFound(f"chat {chat_id} not found")

    async def clear_chats(self, team_id: str, app_id: str, *, source: str, owner: ChatOwner) -> list[str]:
        """Delete ``owner``'s chats of the app created from ``source``, and their items; returns their chat
        ids."""
        where: list[Any] = [Chat.team_id == team_id, Chat.app_id == app_id, Chat.source == source]
        where += _owned_by(owner)
        async with self.db.transaction() as session:
            ids = list(await session.scalars(select(Chat.chat_id).where(*where)))
            if ids:
                await session.execute(
                    delete(ChatItem).where(
                        ChatItem.team_id == team_id, ChatItem.app_id == app_id, ChatItem.chat_id.in_(ids)
                    )
                )
                await session.execute(
                    delete(Chat).where(Chat.team_id == team_id, Chat.app_id == app_id, Chat.chat_id.in_(ids))
                )
            return ids

    async def delete_chat(self, team_id: str, app_id: str, chat_id: str) -> None:
        async with self.db.transaction() as session:
            await session.execute(
                delete(ChatItem).where(
                    ChatItem.team_id == team_id, ChatItem.app_id == app_id, ChatItem.chat_id == chat_id
                )
            )
            await session.execute(
                delete(Chat).where(Chat.team_id == team_id, Chat.app_id == app_id, Chat.chat_id == chat_id)
            )

    async def add_item(self, team_id: str, item: ChatItemRecord) -> ChatItemRecord:
        try:
            async with self.db.transaction() as session:
                seq = await session.scalar(
                    select(func.coalesce(func.max(ChatItem.seq), 0)).where(
                        ChatItem.app_id == item.app_id, ChatItem.chat_id == item.chat_id
                    )
                )
                row = ChatItem(
                    team_id=team_id,
                    app_id=item.app_id,
                    chat_id=item.chat_id,
                    data_id=item.data_id,
                    seq=int(seq or 0) + 1,
                    obj=item.obj,
                    value=item.value,
                    response_data=item.response_data,
                    user_good_feedback=item.user_good_feedback,
                    user_bad_feedback=item.user_bad_feedback,
                    duration_seconds=item.duration_seconds,
                )
                session.add(row)
                await session.flush()
                return replace(item, created_at=row.created_at)
        except IntegrityError:
            raise Conflict(f"chat item {item.data_id} already exists in chat {item.chat_id}") from None

    async def update_item(
        self, team_id: str, app_id: str, chat_id: str, data_id: str, **changes: Any
    ) -> None:
        unknown = set(changes) - _ITEM_FIELDS
        if unknown:
            raise ValueError(f"cannot change {', '.join(sorted(unknown))}")
        async with self.db.transaction() as session:
            result = await session.execute(
                update(ChatItem)
                .where(
                    ChatItem.team_id == team_id,
                    ChatItem.app_id == app_id,
                    ChatItem.chat_id == chat_id,
                    ChatItem.data_id == data_id,
                )
                .values(**changes)
            )
            if result.rowcount == 0:  # type: ignore[attr-defined]
                raise NotFound(f"chat item {data_id} not found")

    async def list_items(
        self, team_id: str, app_id: str, chat_id: str, *, offset: int = 0, limit: int = 50
    ) -> tuple[list[ChatItemRecord], int]:
        where = (ChatItem.team_id == team_id, ChatItem.app_id == app_id, ChatItem.chat_id == chat_id)
        async with self.db.sessions() as session:
            total = int(await session.scalar(select(func.count()).select_from(ChatItem).where(*where)) or 0)
            rows = await session.scalars(
                select(ChatItem).where(*where).order_by(ChatItem.seq).offset(offset).limit(limit)
            )
            return [item_record(row) for row in rows], total

    async def delete_item(self, team_id: str, app_id: str, chat_id: str, data_id: str) -> None:
        async with self.db.transaction() as session:
            result = await session.execute(
                delete(ChatItem).where(
                    ChatItem.team_id == team_id,
                    ChatItem.app_id == app_id,
                    ChatItem.chat_id == chat_id,
                    ChatItem.data_id == data_id,
                )
            )
            if result.rowcount == 0:  # type: ignore[attr-defined]
                raise NotFound(f"chat item {data_id} not found")
