"""Chat history and records over FastGPT's paths (both spellings: ``core/chat/*`` and
``core/chat/history/*`` / ``core/chat/record/*``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from pydantic import Field, field_validator

from fathom.chat import ChatError, draft_workflow
from fathom.chat.ownership import ChatCaller
from fathom.chat.share_links import ShareVisit
from fathom.server.auth import AuthContext, authenticate
from fathom.server.errors import ApiError, envelope
from fathom.server.pagination import Page
from fathom.server.routes.app_access import (
    chat_caller,
    chat_of,
    load_app_and_owner,
    visitor_caller,
)
from fathom.server.routes.common import ANY_METHOD, iso, object_id
from fathom.server.routes.history_models import (
    ChatInit,
    ChatInitView,
    ChatOfApp,
    ClearHistories,
    DeleteRecord,
    HistoryItem,
    ListHistories,
    Records,
    RecordView,
    ResData,
    UpdateHistory,
    Visitor,
)
from fathom.server.routes.history_views import app_init_view, record_view
from fathom.server.routes.share_chat import caller, visitor_records, visitor_res_data
from fathom.server.typed import ObjectId, answers, parsed
from fathom.store.protocols import AppRecord, ChatRecord, NotFound

router = APIRouter(tags=["chat history"])

FEEDBACK_MAX = 5_000  # a user's feedback comment, in characters


async def history_app(
    request: Request, auth: AuthContext, app_id: str | None
) -> tuple[AppRecord, ChatCaller]:
    """The app whose chats are read or changed (any member who may read the app, and a key of the app),
    and the caller as the chat ownership rule sees them: which chats are theirs is decided per chat.
    No ``app_id`` is a 400 naming ``appId``."""
    app_id = object_id({"appId": app_id}, "appId")
    app, owner = await load_app_and_owner(request, auth, app_id, "read", chatting=True)
    return app, await chat_caller(request, auth, app.id, owner)


@router.api_route(
    "/api/core/chat/getHistories",
    methods=ANY_METHOD,
    summary="List chats of an app",
    responses=answers(Page[HistoryItem]),
)
@router.api_route("/api/core/chat/history/getHistories", methods=ANY_METHOD, include_in_schema=False)
async def get_histories(
    request: Request,
    auth: AuthContext | ShareVisit = Depends(caller),
    payload: ListHistories = parsed(ListHistories),
) -> dict[str, Any]:
    offset, size = payload.window(cap=100)
    if isinstance(auth, ShareVisit):  # a share page: the visitor's own chats through this link
        link = auth.link
        if payload.appId not in (None, "", link.app_id):
            return envelope({"list": [], "total": 0})
        chats, total = await chat_of(request).history.list_histories(
            link.team_id, link.app_id, visitor_caller(auth), source=None, offset=offset, limit=size
        )
        return envelope({"list": [_history_view(c) for c in chats], "total": total})
    if not payload.appId:
        return envelope({"list": [], "total": 0})
    app, chat_caller_ = await history_app(request, auth, payload.appId)
    chats, total = await chat_of(request).history.list_histories(  # the caller's own chats only
        auth.team_id, app.id, chat_caller_, source=payload.source or None, offset=offset, limit=size
    )
    return envelope({"list": [_history_view(c) for c in chats], "total": total})


def _history_view(chat: ChatRecord) -> dict[str, Any]:
    return {
        "chatId": chat.chat_id,
        "updateTime": iso(chat.updated_at),
        "appId": chat.app_id,
        "customTitle": chat.custom_title,
        "title": chat.title,
        "top": chat.top,
    }


@router.api_route(
    "/api/core/chat/updateHistory",
    methods=ANY_METHOD,
    summary="Rename or pin a chat",
    responses=answers(None),
)
@router.api_route("/api/core/chat/history/updateHistory", methods=ANY_METHOD, include_in_schema=False)
async def update_history(
    request: Request,
    auth: AuthContext = Depends(authenticate),
    payload: UpdateHistory = parsed(UpdateHistory),
) -> dict[str, Any]:
    app, caller_ = await history_app(request, auth, payload.appId)
    await chat_of(request).history.update_history(
        auth.team_id,
        app.id,
        payload.chatId,
        caller_,
        title=payload.title,
        custom_title=payload.customTitle,
        top=payload.top,
    )
    return envelope(None)


@router.api_route(
    "/api/core/chat/delHistory", methods=ANY_METHOD, summary="Delete a chat", responses=answers(None)
)
@router.api_route("/api/core/chat/history/delHistory", methods=ANY_METHOD, include_in_schema=False)
async def del_history(
    request: Request,
    auth: AuthContext = Depends(authenticate),
    payload: ChatOfApp = parsed(ChatOfApp),
) -> dict[str, Any]:
    app, caller_ = await history_app(request, auth, payload.appId)
    await chat_of(request).history.delete_history(auth.team_id, app.id, payload.chatId, caller_)
    return envelope(None)


@router.api_route(
    "/api/core/chat/clearHistories",
    methods=ANY_METHOD,
    summary="Delete the API chats of an app",
    responses=answers(None),
)
@router.api_route("/api/core/chat/history/clearHistories", methods=ANY_METHOD, include_in_schema=False)
async def clear_histories(
    request: Request,
    auth: AuthContext = Depends(authenticate),
    payload: ClearHistories = parsed(ClearHistories),
) -> dict[str, Any]:
    app, caller_ = await history_app(request, auth, payload.appId)
    # FastGPT: a key clears the API chats, a console session the console chats; each its own only
    source = "online" if auth.api_key_id is None else "api"
    await chat_of(request).history.clear_histories(auth.team_id, app.id, caller_, source=source)
    return envelope(None)


@router.api_route(
    "/api/core/chat/init",
    methods=ANY_METHOD,
    summary="A chat's title, variables and app config",
    responses=answers(ChatInitView),
)
async def chat_init(
    request: Request,
    auth: AuthContext = Depends(authenticate),
    payload: ChatInit = parsed(ChatInit),
) -> dict[str, Any]:
    app, caller_ = await history_app(request, auth, payload.appId)
    chat_id = payload.chatId or ""
    chat = await chat_of(request).history.get_chat(auth.team_id, app.id, chat_id, caller_)
    try:
        graph = await chat_of(request).apps.run_graph(auth.team_id, app.id)
        workflow = graph.workflow
    except ChatError:
        workflow = draft_workflow(app)
    return envelope(app_init_view(app, workflow, chat, chat_id))


@router.api_route(
    "/api/core/chat/getPaginationRecords",
    methods=ANY_METHOD,
    summary="A page of chat records",
    responses=answers(Page[RecordView]),
)
@router.api_route("/api/core/chat/record/getPaginationRecords", methods=ANY_METHOD, include_in_schema=False)
async def pagination_records(
    request: Request,
    auth: AuthContext | ShareVisit = Depends(caller),
    payload: Records = parsed(Records),
) -> dict[str, Any]:
    offset, size = payload.window(cap=100)
    if isinstance(auth, ShareVisit):
        page = await visitor_records(request, auth, payload.appId, payload.chatId, offset=offset, limit=size)
        return envelope(page)
    if not payload.appId or not payload.chatId:
        return envelope({"list": [], "total": 0})
    app, caller_ = await history_app(request, auth, payload.appId)
    items, total = await chat_of(request).history.records(
        auth.team_id, app.id, payload.chatId, caller_, offset=offset, limit=size
    )
    custom = bool(payload.loadCustomFeedbacks)
    return envelope({"list": [record_view(i, custom_feedbacks=custom) for i in items], "total": total})


@router.api_route(
    "/api/core/chat/getResData",
    methods=ANY_METHOD,
    summary="Node responses of one answer",
    responses=answers(list[dict[str, Any]]),
)
@router.api_route("/api/core/chat/record/getResData", methods=ANY_METHOD, include_in_schema=False)
async def get_res_data(
    request: Request,
    auth: AuthContext | ShareVisit = Depends(caller),
    payload: ResData = parsed(ResData),
) -> dict[str, Any]:
    if isinstance(auth, ShareVisit):
        return envelope(await visitor_res_data(request, auth, payload.appId, payload.chatId, payload.dataId))
    app, caller_ = await history_app(request, auth, payload.appId)
    chat_id, data_id = payload.chatId or "", payload.dataId or ""
    if not chat_id or not data_id:
        return envelope([])
    try:
        item = await chat_of(request).history.find_item(auth.team_id, app.id, chat_id, data_id, caller_)
    except NotFound:
        return envelope([])
    return envelope(item.response_data)


@router.api_route(
    "/api/core/chat/item/delete",
    methods=ANY_METHOD,
    summary="Delete one chat record",
    responses=answers(None),
)
@router.api_route("/api/core/chat/record/delete", methods=ANY_METHOD, include_in_schema=False)
async def delete_record(
    request: Request,
    auth: AuthContext = Depends(authenticate),
    payload: DeleteRecord = parsed(DeleteRecord),
) -> dict[str, Any]:
    app, caller_ = await history_app(request, auth, payload.appId)
    chat_id, content_id = payload.chatId, payload.contentId or payload.dataId
    if not chat_id or not content_id:
        return envelope(None)  # FastGPT: a no-op that succeeds
    await chat_of(request).history.delete_item(auth.team_id, app.id, chat_id, content_id, caller_)
    return envelope(None)


class UserFeedbackBody(Visitor):
    """FastGPT's UpdateUserFeedbackBody: a field present sets that feedback (its text is the comment),
    a field absent or null takes it away. With ``shareId`` + ``outLinkUid`` a share page's visitor rates
    an answer of their own chat through that link."""

    app_id: ObjectId = Field(alias="appId")
    chat_id: str = Field("", alias="chatId", max_length=1024)
    data_id: str | None = Field(None, alias="dataId", max_length=64)
    chat_item_id: str | None = Field(None, alias="chatItemId", max_length=64)
    user_good_feedback: str | None = Field(None, alias="userGoodFeedback", max_length=FEEDBACK_MAX)
    user_bad_feedback: str | None = Field(None, alias="userBadFeedback", max_length=FEEDBACK_MAX)

    @field_validator("user_good_feedback", "user_bad_feedback", mode="before")
    @classmethod
    def _flag(cls, value: Any) -> Any:
        """Older clients send ``true``/``false`` for a plain like or dislike."""
        if isinstance(value, bool):
            return "yes" if value else None
        return value


@router.post(
    "/api/core/chat/feedback/updateUserFeedback",
    summary="Like or dislike an answer, with comment",
    responses=answers(None),
)
@router.api_route(  # the other verbs too, undocumented: a GET's query string cannot carry a long comment
    "/api/core/chat/feedback/updateUserFeedback",
    methods=[m for m in ANY_METHOD if m != "POST"],
    include_in_schema=False,
)
async def update_feedback(
    request: Request,
    auth: AuthContext | ShareVisit = Depends(caller),
    body: UserFeedbackBody = parsed(UserFeedbackBody),
) -> dict[str, Any]:
    if isinstance(auth, ShareVisit):  # a visitor: only their own chat through this link
        if body.app_id != auth.link.app_id:
            raise ApiError(403, "unAuthChat", f"appId: app {body.app_id} is not this share link's")
        team_id, app_id, caller_ = auth.link.team_id, auth.link.app_id, visitor_caller(auth)
    else:
        app, caller_ = await history_app(request, auth, body.app_id)
        team_id, app_id = auth.team_id, app.id
    await chat_of(request).history.update_feedback(
        team_id,
        app_id,
        body.chat_id,
        body.data_id or body.chat_item_id or None,
        caller_,
        good=body.user_good_feedback,
        bad=body.user_bad_feedback,
    )
    return envelope(None)
