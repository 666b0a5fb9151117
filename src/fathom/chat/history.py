"""The chat history use cases of FastGPT's history & record API (openapi §2)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from fathom.chat.errors import DATA_ID_REQUIRED, ChatError
from fathom.chat.history_store import ChatListStore
from fathom.store.protocols import ChatItemRecord, ChatRecord, ChatRepository, NotFound

VISITOR_HISTORY = timedelta(days=30)  # FastGPT: share-link visitors see their last 30 days


def record_preview(item: ChatItemRecord) -> dict[str, Any]:
    """An AI item's node data replaced by FastGPT's preview fields."""
    responses = [r for r in item.response_data if isinstance(r, dict)]
    quotes = [q for r in responses for q in r.get("quoteList") or []]
    models = [
        {"moduleName": r.get("moduleName"), "model": r.get("model")} for r in responses if r.get("model")
    ]
    return {
        "llmModuleAccount": len(models),
        "totalQuoteList": quotes,
        "totalRunningTime": round(sum(float(r.get("runningTime") or 0) for r in responses), 2),
        "historyPreviewLength": max((len(r.get("historyPreview") or []) for r in responses), default=0),
    }


class HistoryService:
    """Chats and chat items of one app, as the history API shows them."""

    def __init__(self, chats: ChatRepository, store: ChatListStore) -> None:
        self.chats = chats
        self.store = store

    async def list_histories(
        self,
        team_id: str,
        app_id: str,
        *,
        source: str | None,
        offset: int,
        limit: int,
        member_id: str | None = None,
        visitor: tuple[str, str] | None = None,
    ) -> tuple[list[ChatRecord], int]:
        """Chats of the app; with ``member_id`` only those that member's keys started (FastGPT's key rule);
        with ``visitor`` (shareId, outLinkUid) that share-link visitor's chats of the last 30 days."""
        since = datetime.now(UTC) - VISITOR_HISTORY if visitor is not None else None
        return await self.store.list_chats(
            team_id,
            app_id,
            source=source,
            offset=offset,
            limit=limit,
            member_id=member_id,
            visitor=visitor,
            since=since,
        )

    async def started_by_other(self, team_id: str, app_id: str, chat_id: str, member_id: str) -> bool:
        """Whether the chat exists and was started by a member other than ``member_id``."""
        exists, starter = await self.store.started_by(team_id, app_id, chat_id)
        return exists and starter is not None and starter != member_id

    async def get_chat(self, team_id: str, app_id: str, chat_id: str) -> ChatRecord | None:
        return await self.chats.get_chat(team_id, app_id, chat_id)

    async def update_history(
        self,
        team_id: str,
        app_id: str,
        chat_id: str,
        *,
        title: str | None = None,
        custom_title: str | None = None,
        top: bool | None = None,
    ) -> None:
        changes: dict[str, Any] = {}
        if title is not None:
            changes["title"] = title
        if custom_title is not None:
            changes["custom_title"] = custom_title
        if top is not None:
            changes["top"] = bool(top)
        await self.store.update_chat(team_id, app_id, chat_id, **changes)

    async def delete_history(self, team_id: str, app_id: str, chat_id: str) -> None:
        await self.chats.delete_chat(team_id, app_id, chat_id)

    async def clear_histories(
        self, team_id: str, app_id: str, *, source: str = "api", member_id: str | None = None
    ) -> int:
        return await self.store.clear_chats(team_id, app_id, source=source, member_id=member_id)

    async def records(
        self, team_id: str, app_id: str, chat_id: str, *, offset: int, limit: int
    ) -> tuple[list[ChatItemRecord], int]:
        """A page counted from the newest item (``offset`` 0 = the latest ``limit`` items), oldest first."""
        _, total = await self.chats.list_items(team_id, app_id, chat_id, limit=1)
        end = max(total - offset, 0)
        start = max(end - limit, 0)
        if end == start:
            return [], total
        items, _ = await self.chats.list_items(team_id, app_id, chat_id, offset=start, limit=end - start)
        return items, total

    async def find_item(self, team_id: str, app_id: str, chat_id: str, data_id: str) -> ChatItemRecord:
        _, total = await self.chats.list_items(team_id, app_id, chat_id, limit=1)
        items, _ = await self.chats.list_items(team_id, app_id, chat_id, limit=max(total, 1))
        for item in items:
            if item.data_id == data_id:
                return item
        raise NotFound(f"chat item {data_id} not found")

    async def delete_item(self, team_id: str, app_id: str, chat_id: str, data_id: str) -> None:
        await self.chats.delete_item(team_id, app_id, chat_id, data_id)

    async def update_feedback(
        self,
        team_id: str,
        app_id: str,
        chat_id: str,
        data_id: str | None,
        *,
        good: str | None,
        bad: str | None,
    ) -> None:
        """Set the feedback fields present and unset the absent ones (FastGPT semantics)."""
        if not data_id:
            raise ChatError(DATA_ID_REQUIRED)
        await self.chats.update_item(
            team_id, app_id, chat_id, data_id, user_good_feedback=good, user_bad_feedback=bad
        )
