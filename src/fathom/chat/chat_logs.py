"""An app's chat logs (FastGPT's ``getChatLogs`` / ``exportChatLogs``): every conversation of every
channel (``online`` console chats, ``api`` key chats, ``share`` link chats, ``test`` debug runs), filtered
by channel, last-activity date, title and feedback, with per-conversation counts; and the owner's mark on
an answer (``adminFeedback``). The queries are ``fathom.store.repositories.chat_logs``'s."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from fathom.chat.errors import DATA_ID_REQUIRED, ChatError
from fathom.store.protocols import (
    ChatItemRecord,
    ChatLogEntry,
    ChatLogQuery,
    ChatLogRepository,
    ChatRepository,
)

EXPORT_LIMIT = 50_000  # conversations in one export, as FastGPT
_EXPORT_BATCH = 500


@dataclass(frozen=True)
class AdminFeedback:
    """The owner's mark on an answer: the corrected question/answer and, when it went into a knowledge
    base, where (FastGPT's ``AdminFbkType``)."""

    q: str
    a: str
    dataset_id: str | None = None
    collection_id: str | None = None
    feedback_data_id: str | None = None

    def stored(self) -> dict[str, Any]:
        value: dict[str, Any] = {"q": self.q, "a": self.a}
        for key, item in (
            ("datasetId", self.dataset_id),
            ("collectionId", self.collection_id),
            ("feedbackDataId", self.feedback_data_id),
        ):
            if item:
                value[key] = item
        return value


class ChatLogService:
    """The app owner's view of its conversations."""

    def __init__(self, store: ChatLogRepository, chats: ChatRepository) -> None:
        self.store = store
        self.chats = chats

    async def list_logs(
        self, team_id: str, app_id: str, query: ChatLogQuery, *, offset: int, limit: int
    ) -> tuple[list[ChatLogEntry], int]:
        return await self.store.page(team_id, app_id, query, offset=offset, limit=limit)

    async def export_logs(
        self, team_id: str, app_id: str, query: ChatLogQuery
    ) -> AsyncIterator[tuple[ChatLogEntry, list[ChatItemRecord]]]:
        """Every matching conversation (at most :data:`EXPORT_LIMIT`) with its feedback items, read in
        batches so a large export never holds every row at once."""
        offset = 0
        while offset < EXPORT_LIMIT:
            size = min(_EXPORT_BATCH, EXPORT_LIMIT - offset)
            entries, _ = await self.store.page(team_id, app_id, query, offset=offset, limit=size)
            if not entries:
                return
            items = await self.store.feedback_items(team_id, app_id, [e.chat.chat_id for e in entries])
            for entry in entries:
                yield entry, items.get(entry.chat.chat_id, [])
            if len(entries) < size:
                return
            offset += size

    async def update_admin_feedback(
        self, team_id: str, app_id: str, chat_id: str, data_id: str | None, feedback: AdminFeedback | None
    ) -> None:
        """Mark an answer with a corrected answer, or (``None``) take the mark away."""
        if not data_id:
            raise ChatError(DATA_ID_REQUIRED)
        value = feedback.stored() if feedback is not None else None
        await self.chats.update_item(team_id, app_id, chat_id, data_id, admin_feedback=value)
