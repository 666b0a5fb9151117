"""Chat-list queries the generic chat repository lacks: filter by source, rename/pin, clear by source."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import delete, false, func, select, update

from fathom.chat.ownership import ChatCaller
from fathom.store.db import Database
from fathom.store.models import Chat, ChatItem, utcnow
from fathom.store.protocols import ChatRecord, NotFound
from fathom.store.repositories.chat_turns import owner_conditions
from fathom.store.repositories.chats import chat_record

DEBUG_SOURCE = "test"


def owned_by(owner: ChatCaller) -> list[Any]:
    """The conditions that select ``owner``'s own chats (:meth:`ChatCaller.owns` as SQL); nobody's
    (an expired link's visitor) selects none."""
    if owner.kind is None:
        return [false()]
    return owner_conditions(
        owner.kind,
        member_id=owner.member_id,
        api_key_id=owner.api_key_id,
        share_id=owner.share_id,
        out_link_uid=owner.out_link_uid,
    )


class ChatListStore:
    """SQL over the ``chats`` table for the history API."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def list_chats(
        self,
        team_id: str,
        app_id: str,
        *,
        source: str | None,
        offset: int,
        limit: int,
        owner: ChatCaller,
        since: datetime | None = None,
    ) -> tuple[list[ChatRecord], int]:
        """``owner``'s own chats, pinned first, then most recently updated; ``source`` and ``since``
        (updated since) filter when given.

        Without ``source``, the editor's debug runs (``chatTest``, source ``test``) are left out: they are
        the builder's, not users' chats; ``source="test"`` lists them."""
        where: list[Any] = [Chat.team_id == team_id, Chat.app_id == app_id]
        if source:
            where.append(Chat.source == source)
        else:
            where.append(Chat.source != DEBUG_SOURCE)
        where += owned_by(owner)
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

    async def clear_chats(self, team_id: str, app_id: str, *, source: str, owner: ChatCaller) -> list[str]:
        """Delete ``owner``'s chats of the app created from ``source``, and their items; returns their chat
        ids."""
        where: list[Any] = [Chat.team_id == team_id, Chat.app_id == app_id, Chat.source == source]
        where += owned_by(owner)
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
