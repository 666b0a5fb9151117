"""The chat history use cases of FastGPT's history & record API (openapi §2)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from fathom.chat.chat_files import ChatFiles, file_keys
from fathom.chat.errors import DATA_ID_REQUIRED, ChatError
from fathom.chat.ownership import ChatAction, ChatCaller
from fathom.chat.projection import still_indexing
from fathom.chat.turn_lease import DEFAULT_LEASE_S, chat_item_state
from fathom.store.protocols import ChatItemRecord, ChatRecord, ChatRepository, NotFound
from fathom.workflow.result import cited_quotes, flat_responses

VISITOR_HISTORY = timedelta(days=30)  # FastGPT: share-link visitors see their last 30 days
# the editor's debug runs (``chatTest``): the builder's, not users' chats; a listing without a source
# leaves them out, ``source="test"`` lists them
DEBUG_SOURCE = "test"


#: the nodes FastGPT counts as an answer's LLM modules (``isLLMNode``: the AI chat and the tool-call agent)
LLM_NODE_TYPES = frozenset({"chatNode", "tools", "agent"})


def record_preview(item: ChatItemRecord) -> dict[str, Any]:
    """An AI item's node data replaced by FastGPT's preview fields (``addStatisticalDataToHistoryItem``:
    the LLM modules among all node responses, nested runs' too, and the first one's history preview
    length), and Fathom's ``datasetIndexing``."""
    responses = [r for r in item.response_data if isinstance(r, dict)]
    llm_nodes = [r for r in flat_responses(responses) if r.get("moduleType") in LLM_NODE_TYPES]
    indexing = still_indexing(responses)
    return {
        # Fathom's: the knowledge bases still indexing when this answer searched them (absent when none)
        **({"datasetIndexing": indexing} if indexing else {}),
        "llmModuleAccount": len(llm_nodes),
        "totalQuoteList": cited_quotes(responses),
        "totalRunningTime": round(sum(float(r.get("runningTime") or 0) for r in responses), 2),
        "historyPreviewLength": len(llm_nodes[0].get("historyPreview") or []) if llm_nodes else 0,
    }


class HistoryService:
    """Chats and chat items of one app, as the history API shows them. Every method that names a chat
    takes the caller and applies :meth:`ChatCaller.may`: a chat the caller may not touch is answered
    exactly as a chat that does not exist."""

    def __init__(
        self,
        chats: ChatRepository,
        files: ChatFiles | None = None,
        *,
        lease_s: float = DEFAULT_LEASE_S,
    ) -> None:
        self.chats = chats
        self.files = files  # a chat's uploaded files go with it
        self.lease_s = lease_s

    def _with_state(self, items: list[ChatItemRecord]) -> list[ChatItemRecord]:
        """Items as they read now: a running answer whose replica stopped refreshing it is interrupted."""
        now = datetime.now(UTC)
        return [
            item if item.status is None else replace(item, status=chat_item_state(item, self.lease_s, now))
            for item in items
        ]

    async def list_histories(
        self, team_id: str, app_id: str, caller: ChatCaller, *, source: str | None, offset: int, limit: int
    ) -> tuple[list[ChatRecord], int]:
        """The caller's own chats of the app (a share-link visitor's: of the last 30 days)."""
        since = datetime.now(UTC) - VISITOR_HISTORY if caller.kind == "visitor" else None
        return await self.chats.list_chats(
            team_id,
            app_id,
            owner=caller,
            source=source,
            exclude_source=None if source else DEBUG_SOURCE,
            since=since,
            offset=offset,
            limit=limit,
        )

    async def get_chat(
        self, team_id: str, app_id: str, chat_id: str, caller: ChatCaller, action: ChatAction = "read"
    ) -> ChatRecord | None:
        """The chat if the caller may ``action`` it, else None (also when there is no such chat)."""
        if not chat_id:
            return None
        chat = await self.chats.get_chat(team_id, app_id, chat_id)
        return chat if caller.may(chat, action) else None

    async def may(
        self, team_id: str, app_id: str, chat_id: str, caller: ChatCaller, action: ChatAction
    ) -> bool | None:
        """Whether the caller may ``action`` the stored chat; None when no chat is stored under the id
        (a new chat's first turn may still be running)."""
        chat = await self.chats.get_chat(team_id, app_id, chat_id)
        return None if chat is None else caller.may(chat, action)

    async def _require(
        self, team_id: str, app_id: str, chat_id: str, caller: ChatCaller, action: ChatAction
    ) -> None:
        if await self.get_chat(team_id, app_id, chat_id, caller, action) is None:
            raise NotFound(f"chat {chat_id} not found")

    async def update_history(
        self,
        team_id: str,
        app_id: str,
        chat_id: str,
        caller: ChatCaller,
        *,
        title: str | None = None,
        custom_title: str | None = None,
        top: bool | None = None,
    ) -> None:
        await self._require(team_id, app_id, chat_id, caller, "write")
        changes: dict[str, Any] = {}
        if title is not None:
            changes["title"] = title
        if custom_title is not None:
            changes["custom_title"] = custom_title
        if top is not None:
            changes["top"] = bool(top)
        await self.chats.update_chat(team_id, app_id, chat_id, **changes)

    async def delete_history(self, team_id: str, app_id: str, chat_id: str, caller: ChatCaller) -> bool:
        """Delete the chat, its items and its uploaded files; False (and nothing done) when there is none
        for the caller."""
        if await self.get_chat(team_id, app_id, chat_id, caller, "delete") is None:
            return False
        await self.chats.delete_chat(team_id, app_id, chat_id)
        if self.files is not None:
            await self.files.delete_chats(team_id, app_id, [chat_id])
        return True

    async def clear_histories(self, team_id: str, app_id: str, caller: ChatCaller, *, source: str) -> int:
        """Delete the caller's own chats of the app made from ``source``, with their uploaded files."""
        chat_ids = await self.chats.clear_chats(team_id, app_id, source=source, owner=caller)
        if chat_ids and self.files is not None:
            await self.files.delete_chats(team_id, app_id, chat_ids)
        return len(chat_ids)

    async def records(
        self, team_id: str, app_id: str, chat_id: str, caller: ChatCaller, *, offset: int, limit: int
    ) -> tuple[list[ChatItemRecord], int]:
        """A page counted from the newest item (``offset`` 0 = the latest ``limit`` items), oldest first;
        no items for a chat the caller may not read."""
        if await self.get_chat(team_id, app_id, chat_id, caller) is None:
            return [], 0
        _, total = await self.chats.list_items(team_id, app_id, chat_id, limit=1)
        end = max(total - offset, 0)
        start = max(end - limit, 0)
        if end == start:
            return [], total
        items, _ = await self.chats.list_items(team_id, app_id, chat_id, offset=start, limit=end - start)
        return self._with_state(items), total

    async def last_answer_state(self, team_id: str, app_id: str, chat_id: str) -> tuple[str, str | None]:
        """The chat's latest answer: its data id and state (``running``, ``interrupted``, None when it
        finished); ``("", None)`` when the chat has no answer. For a caller already allowed the chat."""
        _, total = await self.chats.list_items(team_id, app_id, chat_id, limit=1)
        items, _ = await self.chats.list_items(team_id, app_id, chat_id, offset=max(total - 2, 0), limit=2)
        answers = [item for item in self._with_state(items) if item.obj == "AI"]
        return (answers[-1].data_id, answers[-1].status) if answers else ("", None)

    async def find_item(
        self, team_id: str, app_id: str, chat_id: str, data_id: str, caller: ChatCaller
    ) -> ChatItemRecord:
        if await self.get_chat(team_id, app_id, chat_id, caller) is None:
            raise NotFound(f"chat item {data_id} not found")
        _, total = await self.chats.list_items(team_id, app_id, chat_id, limit=1)
        items, _ = await self.chats.list_items(team_id, app_id, chat_id, limit=max(total, 1))
        for item in items:
            if item.data_id == data_id:
                return self._with_state([item])[0]
        raise NotFound(f"chat item {data_id} not found")

    async def delete_item(
        self, team_id: str, app_id: str, chat_id: str, data_id: str, caller: ChatCaller
    ) -> None:
        """Delete one item, and the uploaded files it names that no other item of the chat names."""
        if await self.get_chat(team_id, app_id, chat_id, caller, "delete") is None:
            raise NotFound(f"chat item {data_id} not found")
        _, total = await self.chats.list_items(team_id, app_id, chat_id, limit=1)
        items, _ = await self.chats.list_items(team_id, app_id, chat_id, limit=max(total, 1))
        await self.chats.delete_item(team_id, app_id, chat_id, data_id)
        gone = [value for item in items if item.data_id == data_id for value in item.value]
        rest = [value for item in items if item.data_id != data_id for value in item.value]
        keys = file_keys(gone) - file_keys(rest)
        if keys and self.files is not None:
            await self.files.delete_keys(team_id, app_id, chat_id, keys)

    async def update_feedback(
        self,
        team_id: str,
        app_id: str,
        chat_id: str,
        data_id: str | None,
        caller: ChatCaller,
        *,
        good: str | None,
        bad: str | None,
    ) -> None:
        """Set the feedback fields present and unset the absent ones (FastGPT semantics); the owner's."""
        if not data_id:
            raise ChatError(DATA_ID_REQUIRED)
        if await self.get_chat(team_id, app_id, chat_id, caller, "write") is None:
            raise NotFound(f"chat item {data_id} not found")
        await self.chats.update_item(
            team_id, app_id, chat_id, data_id, user_good_feedback=good, user_bad_feedback=bad
        )
