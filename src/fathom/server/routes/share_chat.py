"""A share link's visitors: ``shareId`` + ``outLinkUid`` instead of an API key (FastGPT's outLink auth).

- ``GET /api/core/chat/outLink/init?shareId=&outLinkUid=&chatId=``: what the share page shows (the
  app's name, intro, welcome text and chat settings, the chat's title), no account needed.
- ``/api/v1|v2/chat/completions`` with ``shareId`` and ``outLinkUid`` and no Authorization header:
  the app's published version runs as the link's creator; the chat is stored with source ``share``, the
  link's shareId and the visitor's uid, and the link's limits apply first (see
  :mod:`fathom.chat.share_links`). What the visitor gets back follows the link's settings
  (:mod:`fathom.chat.share_view`).
- The history routes a share page needs (``getHistories``, ``getPaginationRecords``, ``getResData``,
  ``updateUserFeedback``) take ``shareId`` + ``outLinkUid`` too, and show (or let rate) a visitor only
  their own chats.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Request
from pydantic import BeforeValidator, Field

from fathom.chat import ChatError, ChatRequest, RunChannel, draft_workflow, split_messages, value_text
from fathom.chat.share_links import SHARE_SOURCE, ShareVisit
from fathom.chat.share_view import ShareView
from fathom.server.auth import AuthContext, authenticate
from fathom.server.errors import envelope
from fathom.server.routes.app_access import chat_of, visitor_caller
from fathom.server.routes.chat_models import ChatCompletionBody, ChatMessage
from fathom.server.routes.common import ANY_METHOD, params
from fathom.server.routes.history_models import ShareInitView
from fathom.server.routes.history_views import app_init_view, record_view
from fathom.server.typed import ApiModel, answers, parsed, validate
from fathom.store.protocols import NotFound

router = APIRouter(tags=["share links"])


def is_share_request(request: Request, values: dict[str, Any]) -> bool:
    """A visitor's request: ``shareId`` sent and no key (with both, the key wins, as in FastGPT). Read
    from the merged parameters before any model: it picks which model the request is validated as."""
    return bool(values.get("shareId")) and not request.headers.get("authorization")


def _text_or_none(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


#: a visitor's ``shareId`` / ``outLinkUid`` as sent: absent and "" are None, any other value its text (the
#: share-link service refuses a missing or bad one with FastGPT's own errors, never a validation error)
VisitorText = Annotated[str | None, BeforeValidator(_text_or_none)]


class ShareVisitor(ApiModel):
    """The share link and visitor of a history request a share page makes."""

    shareId: VisitorText = None
    outLinkUid: VisitorText = None


class ShareChatBody(ChatCompletionBody):
    """A visitor's completions body: FastGPT's chat body plus the link and the visitor (no key)."""

    shareId: VisitorText = None
    outLinkUid: VisitorText = None


async def _admit_visitor(request: Request, share_id: str | None, out_link_uid: str | None) -> ShareVisit:
    """The visitor of a share page or history request (the link's hook asked, if it has one)."""
    return await chat_of(request).share_links.admit_visit(share_id, out_link_uid)


async def caller(request: Request) -> AuthContext | ShareVisit:
    """FastAPI dependency of the history routes a share page reads: a visitor, else a key or session."""
    values = await params(request)
    if is_share_request(request, values):
        visitor = validate(ShareVisitor, values)
        return await _admit_visitor(request, visitor.shareId, visitor.outLinkUid)
    return await authenticate(request)


async def _visitors_chat_id(
    request: Request, visit: ShareVisit, app_id: str | None, chat_id: str | None
) -> str | None:
    """The ``chatId`` asked for when it is the visitor's chat, else None (an empty answer)."""
    link = visit.link
    if not chat_id or app_id not in (None, "", link.app_id):
        return None
    chat = await chat_of(request).history.get_chat(link.team_id, link.app_id, chat_id, visitor_caller(visit))
    return chat_id if chat is not None else None


async def visitor_records(
    request: Request,
    visit: ShareVisit,
    app_id: str | None,
    chat_id: str | None,
    *,
    offset: int,
    limit: int,
) -> dict[str, Any]:
    """``getPaginationRecords`` for a visitor: their chat's records, quotes as the link shows them."""
    chat_id = await _visitors_chat_id(request, visit, app_id, chat_id)
    if chat_id is None:
        return {"list": [], "total": 0}
    link = visit.link
    items, total = await chat_of(request).history.records(
        link.team_id, link.app_id, chat_id, visitor_caller(visit), offset=offset, limit=limit
    )
    view = ShareView.of(link)
    shown = []
    for item in items:
        record = record_view(item)
        if "totalQuoteList" in record:
            record["totalQuoteList"] = view.quotes(record["totalQuoteList"])
        shown.append(record)
    return {"list": shown, "total": total}


async def visitor_res_data(
    request: Request, visit: ShareVisit, app_id: str | None, chat_id: str | None, data_id: str | None
) -> list[Any]:
    """``getResData`` for a visitor: the answer's node responses if the link shows them."""
    chat_id = await _visitors_chat_id(request, visit, app_id, chat_id)
    if chat_id is None or not data_id:
        return []
    link = visit.link
    try:
        item = await chat_of(request).history.find_item(
            link.team_id, link.app_id, chat_id, data_id, visitor_caller(visit)
        )
    except NotFound:
        return []
    return ShareView.of(link).responses(item.response_data)


def _question(messages: list[ChatMessage] | None) -> str:
    try:
        return value_text(split_messages(messages)[1])
    except ChatError:
        return ""


async def start_share_chat(
    request: Request, body: ShareChatBody, *, stream: bool, detail: bool, api_version: int
) -> tuple[RunChannel, ShareView]:
    """Admit the visitor (limits, hook), then run the link's app as its creator."""
    chat = chat_of(request)
    visit = await chat.share_links.admit_chat(body.shareId, body.outLinkUid, _question(body.messages))
    link = visit.link
    channel = await chat.runs.start(
        ChatRequest(
            team_id=link.team_id,
            member_id=link.member_id,
            app_id=link.app_id,
            messages=body.messages,
            chat_id=body.chatId,  # another's chat id is refused when the run is prepared
            stream=stream,
            detail=detail,
            variables=body.variables,
            response_chat_item_id=body.responseChatItemId or None,
            metadata=body.metadata,
            custom_uid=visit.uid,
            source=SHARE_SOURCE,
            api_version=api_version,
            share_link_id=link.id,
            share_id=link.share_id,
            out_link_uid=visit.uid,
        )
    )
    chat.share_links.report_finish(visit, body.outLinkUid or "", channel.wait_done)  # admitted: not empty
    return channel, ShareView.of(link)


class OutLinkInit(ApiModel):
    """The share page's link and visitor (both checked by the service: FastGPT's ``linkUnInvalid``)."""

    share_id: str = Field("", alias="shareId", max_length=64)
    out_link_uid: str = Field("", alias="outLinkUid", max_length=1000)
    chat_id: str = Field("", alias="chatId", max_length=1024)


@router.api_route(
    "/api/core/chat/outLink/init",
    methods=ANY_METHOD,
    summary="A share page's app and chat (no account)",
    responses=answers(ShareInitView),
)
async def out_link_init(request: Request, body: OutLinkInit = parsed(OutLinkInit)) -> dict[str, Any]:
    visit = await _admit_visitor(request, body.share_id or None, body.out_link_uid or None)
    link = visit.link
    chat_id = body.chat_id
    runs = chat_of(request)
    chat = await runs.history.get_chat(link.team_id, link.app_id, chat_id, visitor_caller(visit))
    try:
        graph = await runs.apps.run_graph(link.team_id, link.app_id)
        app, workflow = graph.app, graph.workflow
    except ChatError:  # not published (yet): the page shows the app, its chat answers why not
        app = await runs.apps.get(link.team_id, link.app_id)
        workflow = draft_workflow(app)
    data = app_init_view(app, workflow, chat, chat_id)
    data["outLink"] = {
        "shareId": link.share_id,
        "name": link.name,
        "responseDetail": link.response_detail,
        "showNodeStatus": link.show_node_status,
        "showRawSource": link.show_raw_source,
        "outLinkUid": visit.uid,
    }
    return envelope(data)
