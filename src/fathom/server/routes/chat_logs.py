"""An app's chat logs for those who manage it (FastGPT's ``/api/core/app/getChatLogs`` and
``/api/core/app/exportChatLogs``, also under their newer names ``logs/list`` and ``logs/exportLogs``) and
the owner's mark with a corrected answer (``/api/core/chat/feedback/adminUpdate``)."""

from __future__ import annotations

import csv
import io
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from fastapi import APIRouter, Depends, Request
from fastapi.responses import StreamingResponse
from pydantic import Field, field_validator, model_validator

from fathom.chat import AdminFeedback, ChatLogEntry, ChatLogQuery, FeedbackFilter
from fathom.server.auth import AuthContext, authenticate
from fathom.server.errors import ApiError, envelope
from fathom.server.pagination import Page, page_window
from fathom.server.routes.app_access import chat_of, load_app
from fathom.server.routes.common import ANY_METHOD, iso
from fathom.server.routes.history_models import ChatLogView
from fathom.server.typed import ApiModel, ObjectId, answers, parsed
from fathom.store.protocols import ChatItemRecord

router = APIRouter(tags=["chat logs"])
# documented as POST, as FastGPT's clients send them; the other verbs are answered the same, undocumented
# (a GET's query string cannot carry a long corrected answer)
OTHER_METHODS = [m for m in ANY_METHOD if m != "POST"]

#: FastGPT's ChatSourceEnum: where a conversation came from
ChatSource = Literal[
    "test", "online", "share", "api", "cronJob", "team", "feishu", "official_account", "wecom", "wechat"
]
SEARCH_MAX = 200
FEEDBACK_MAX = 20_000  # characters of a corrected question or answer
DEFAULT_DAYS = 7  # FastGPT: without dates, the last seven days


class ChatLogsBody(ApiModel):
    """Which conversations of an app to list (FastGPT's GetAppChatLogsBody)."""

    app_id: ObjectId = Field(alias="appId")
    date_start: datetime | None = Field(None, alias="dateStart", description="last activity from (ISO 8601)")
    date_end: datetime | None = Field(None, alias="dateEnd", description="last activity until (ISO 8601)")
    sources: list[ChatSource] | None = Field(None, description="channels; all when absent")
    feedback_type: FeedbackFilter = Field("all", alias="feedbackType")
    chat_search: str | None = Field(None, alias="chatSearch", max_length=SEARCH_MAX)
    log_title: str | None = Field(None, alias="logTitle", max_length=SEARCH_MAX)
    page_size: int | None = Field(None, alias="pageSize", ge=1, le=10**6, description="≤ 100; default 10")
    offset: int | None = Field(None, ge=0, le=10**9)
    page_num: int | None = Field(None, alias="pageNum", ge=1, le=10**7, description="1-based, with offset 0")

    @field_validator("sources", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        """The query string form ``sources=api,online``."""
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()] or None
        return value

    def window(self) -> tuple[int, int]:
        return page_window(self.page_size, self.offset, self.page_num, cap=100)

    def query(self) -> ChatLogQuery:
        try:
            end = _utc(self.date_end) if self.date_end else datetime.now(UTC)
        except OverflowError:
            raise ApiError(400, "invalidParams", "dateEnd: out of range") from None
        try:
            start = _utc(self.date_start) if self.date_start else end - timedelta(days=DEFAULT_DAYS)
        except OverflowError:
            raise ApiError(400, "invalidParams", "dateStart: out of range") from None
        if start > end:
            raise ApiError(400, "invalidParams", "dateStart: must not be after dateEnd")
        return ChatLogQuery(
            date_start=start,
            date_end=end,
            sources=tuple(self.sources) if self.sources else None,
            feedback=self.feedback_type,
            search=self.chat_search or self.log_title or None,
        )


class ExportChatLogsBody(ChatLogsBody):
    """The filters of the list, and the labels to write for each channel (FastGPT's ``sourcesMap``)."""

    sources_map: dict[str, dict[str, str]] | None = Field(
        None, alias="sourcesMap", description='{"online": {"label": "Console"}, …}'
    )


class AdminFeedbackBody(ApiModel):
    """FastGPT's AdminUpdateFeedbackBody: the answer (``dataId``; ``chatItemId`` in older clients, whose
    ``dataId`` was the knowledge-base record) and the corrected question/answer."""

    app_id: ObjectId = Field(alias="appId")
    chat_id: str = Field(alias="chatId", min_length=1, max_length=1024)
    data_id: str | None = Field(None, alias="dataId", max_length=64)
    chat_item_id: str | None = Field(None, alias="chatItemId", max_length=64)
    dataset_id: str | None = Field(None, alias="datasetId", max_length=64)
    collection_id: str | None = Field(None, alias="collectionId", max_length=64)
    feedback_data_id: str | None = Field(None, alias="feedbackDataId", max_length=64)
    q: str = Field(min_length=1, max_length=FEEDBACK_MAX)
    a: str = Field("", max_length=FEEDBACK_MAX)

    @model_validator(mode="after")
    def _legacy(self) -> AdminFeedbackBody:
        if self.chat_item_id:  # the older form: chatItemId names the answer, dataId the record
            self.feedback_data_id = self.feedback_data_id or self.data_id
            self.data_id = self.chat_item_id
        return self

    def feedback(self) -> AdminFeedback:
        return AdminFeedback(
            q=self.q,
            a=self.a,
            dataset_id=self.dataset_id,
            collection_id=self.collection_id,
            feedback_data_id=self.feedback_data_id,
        )


def _utc(value: datetime) -> datetime:
    return value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)


def _log_view(entry: ChatLogEntry) -> dict[str, Any]:
    chat = entry.chat
    return {
        "_id": chat.chat_id,
        "id": chat.chat_id,
        "chatId": chat.chat_id,
        "title": chat.title,
        "customTitle": chat.custom_title,
        "source": chat.source,
        "time": iso(chat.updated_at),
        "updateTime": iso(chat.updated_at),
        "createTime": iso(chat.created_at),
        "messageCount": entry.message_count,
        "userGoodFeedbackCount": entry.good_count,
        "userBadFeedbackCount": entry.bad_count,
        "markCount": entry.mark_count,
        "averageResponseTime": entry.average_response_time,
        "tmbId": entry.member_id,
        "outLinkUid": chat.out_link_uid,
        "shareId": chat.share_id,
        # who owns the chat (docs/security.md): "member", "key" or "visitor", and their name
        "ownerType": chat.owner_kind,
        "ownerName": entry.owner_name,
        "apiKeyId": chat.api_key_id,
    }


@router.post(
    "/api/core/app/getChatLogs",
    summary="An app's conversations, with feedback counts",
    responses=answers(Page[ChatLogView]),
)
@router.api_route("/api/core/app/getChatLogs", methods=OTHER_METHODS, include_in_schema=False)
@router.api_route("/api/core/app/logs/list", methods=ANY_METHOD, include_in_schema=False)
async def get_chat_logs(
    request: Request, auth: AuthContext = Depends(authenticate), body: ChatLogsBody = parsed(ChatLogsBody)
) -> dict[str, Any]:
    app = await load_app(request, auth, body.app_id, "manage")
    offset, size = body.window()
    entries, total = await chat_of(request).logs.list_logs(
        auth.team_id, app.id, body.query(), offset=offset, limit=size
    )
    return envelope({"list": [_log_view(e) for e in entries], "total": total})


@router.post(
    "/api/core/chat/feedback/adminUpdate",
    summary="Mark an answer and give the corrected one",
    responses=answers(dict[str, Any]),
)
@router.api_route("/api/core/chat/feedback/adminUpdate", methods=OTHER_METHODS, include_in_schema=False)
@router.api_route("/api/core/chat/feedback/updateAdminFeedback", methods=ANY_METHOD, include_in_schema=False)
async def admin_update_feedback(
    request: Request,
    auth: AuthContext = Depends(authenticate),
    body: AdminFeedbackBody = parsed(AdminFeedbackBody),
) -> dict[str, Any]:
    app = await load_app(request, auth, body.app_id, "manage")
    await chat_of(request).logs.update_admin_feedback(
        auth.team_id, app.id, body.chat_id, body.data_id, body.feedback()
    )
    return envelope({})


# the export: one row per conversation, a header row first; cells a spreadsheet would run as a
# formula (=, +, -, @, tab, CR first) get a leading apostrophe, as FastGPT's sanitizeCsvField does
CSV_HEADER = [
    "Time",
    "Created",
    "Source",
    "Title",
    "Chat ID",
    "Member",
    "Messages",
    "Good feedback",
    "Bad feedback",
    "Marked",
    "Feedback",
]
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _csv_cell(value: Any) -> str:
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


def _feedback_text(items: list[ChatItemRecord]) -> str:
    """Each answer's feedback on its own line: ``good: …``, ``bad: …``, ``corrected: …``."""
    lines = []
    for item in items:
        if item.user_good_feedback is not None:
            lines.append(f"[{item.data_id}] good: {item.user_good_feedback}")
        if item.user_bad_feedback is not None:
            lines.append(f"[{item.data_id}] bad: {item.user_bad_feedback}")
        if item.admin_feedback:
            lines.append(f"[{item.data_id}] corrected: {item.admin_feedback.get('a') or ''}")
    return "\n".join(lines)


def _csv_row(entry: ChatLogEntry, items: list[ChatItemRecord], labels: dict[str, str]) -> list[str]:
    chat = entry.chat
    cells = [
        iso(chat.updated_at),
        iso(chat.created_at),
        labels.get(chat.source, chat.source),
        chat.custom_title or chat.title,
        chat.chat_id,
        chat.out_link_uid or entry.member_id,  # FastGPT: a share-link visitor's outLinkUid
        entry.message_count,
        entry.good_count,
        entry.bad_count,
        entry.mark_count,
        _feedback_text(items),
    ]
    return [_csv_cell(c) for c in cells]


def _line(cells: list[str]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerow(cells)
    return out.getvalue()


@router.post(
    "/api/core/app/exportChatLogs",
    summary="An app's conversations as CSV",
    response_class=StreamingResponse,
)
@router.api_route("/api/core/app/exportChatLogs", methods=OTHER_METHODS, include_in_schema=False)
@router.api_route("/api/core/app/logs/exportLogs", methods=ANY_METHOD, include_in_schema=False)
async def export_chat_logs(
    request: Request,
    auth: AuthContext = Depends(authenticate),
    body: ExportChatLogsBody = parsed(ExportChatLogsBody),
) -> StreamingResponse:
    app = await load_app(request, auth, body.app_id, "manage")
    query = body.query()
    labels = {k: v["label"] for k, v in (body.sources_map or {}).items() if v.get("label")}
    rows = chat_of(request).logs.export_logs(auth.team_id, app.id, query)

    async def lines() -> AsyncIterator[bytes]:
        yield ("\ufeff" + _line(CSV_HEADER)).encode()  # the BOM: spreadsheets then read it as UTF-8
        async for entry, items in rows:
            yield _line(_csv_row(entry, items, labels)).encode()

    return StreamingResponse(
        lines(),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": 'attachment; filename="chat-logs.csv"'},
    )
