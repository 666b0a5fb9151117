"""The OpenAI-compatible chat endpoint with FastGPT's SSE events (``/api/v1|v2/chat/completions``),
the chat test on the draft, stop, and resumption of a dropped stream."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response

from fathom.chat import (
    APP_KEY_REQUIRED,
    ChatError,
    ChatForbidden,
    ChatRequest,
    RunChannel,
    check_workflow,
    completion_response,
)
from fathom.chat.fanout import RemoteChannel
from fathom.chat.share_view import ShareView
from fathom.server.auth import AuthContext, authenticate
from fathom.server.errors import ApiError, chat_error, envelope, kind_of, not_found
from fathom.server.json_response import CompactJSONResponse
from fathom.server.routes.app_access import chat_caller, chat_of, load_app_and_owner
from fathom.server.routes.chat_models import (
    ChatCompletionBody,
    ChatRef,
    ResumeChat,
    Stopped,
    chat_answers,
)
from fathom.server.routes.common import ANY_METHOD, params
from fathom.server.routes.share_chat import ShareChatBody, is_share_request, start_share_chat
from fathom.server.sse import HEARTBEAT_SECONDS, encode_frame, error_stream, sse_response, stream_frames
from fathom.server.typed import answers, as_flag, documents, parsed, validate
from fathom.store.protocols import NotFound

router = APIRouter(tags=["chat"])


def _heartbeat_of(request: Request) -> float:
    value = getattr(request.app.state, "sse_heartbeat_s", None)
    return float(value) if value else HEARTBEAT_SECONDS


def _last_event_id(request: Request, body_value: int | None) -> int | None:
    """The frame a client resumes after: the ``Last-Event-ID`` header, else the body's ``lastEventId``."""
    raw = request.headers.get("last-event-id")
    if raw is None or raw.strip() == "":
        return None if body_value is None else max(body_value, 0)
    try:
        return max(int(raw.strip()), 0)
    except ValueError:
        raise ApiError(400, "invalidParams", f"Last-Event-ID: must be a frame number, got {raw!r}") from None


def _resolve_app_id(auth: AuthContext, body_app: str | None) -> str:
    """The app of a chat request: the key's own app, else ``appId`` in the body, else the legacy
    ``<key>-<appId>`` token's."""
    if auth.key_app_bound:
        if body_app and body_app != auth.app_id:
            raise ChatForbidden(f"this key is limited to app {auth.app_id}")
        return str(auth.app_id)
    app_id = body_app or auth.app_id
    if not app_id:
        raise ChatError(APP_KEY_REQUIRED)
    return str(app_id)


def _chat_source(auth: AuthContext, *, draft: bool) -> str:
    """FastGPT's ChatSourceEnum for a new chat: ``test`` for the editor's chat test, ``api`` for a
    request with an API key, ``online`` for the console signed in by password (a session cookie)."""
    if draft:
        return "test"
    return "api" if auth.api_key_id is not None else "online"


def _failure(exc: ApiError, stream: bool) -> Response:
    """FastGPT's answer to a refused chat: the envelope, or with ``stream`` one ``event: error`` frame
    (the envelope for a named error, ``{"message"}`` for a generic one); the HTTP status is the error's."""
    if stream:
        response = error_stream(exc.body() if exc.status_text else exc.message)
        response.status_code = exc.http_status
        return response
    return exc.response()


async def _run_chat(request: Request, *, api_version: int, draft: bool = False) -> Response:
    """Authentication happens here, not in a dependency: a streaming request that fails on its key
    or its app gets FastGPT's ``event: error`` frame, not a JSON body. A request with ``shareId`` (and
    no Authorization header) is a share link's visitor: see :mod:`fathom.server.routes.share_chat`."""
    values = await params(request)
    # how a refusal is sent (a frame or JSON): read as the model reads it, before the body is checked
    stream = as_flag(values.get("stream"), draft)
    detail = as_flag(values.get("detail"), draft)
    # FastGPT: the API strips [<id>](CITE) markers unless asked to keep them; the chat test keeps them
    retain = as_flag(values.get("retainDatasetCite"), draft)
    view: ShareView | None = None
    try:
        if not draft and is_share_request(request, values):
            share_body = validate(ShareChatBody, values)  # a visitor has no key: the body is checked first
            channel, view = await start_share_chat(
                request, share_body, stream=stream, detail=detail, api_version=api_version
            )
            retain = retain and view.response_detail
        else:
            started = await _start_member_chat(
                request,
                values,
                stream=stream,
                detail=detail,
                retain=retain,
                api_version=api_version,
                draft=draft,
            )
            if not isinstance(started, RunChannel):
                return started
            channel = started
    except ChatError as exc:
        return _failure(chat_error(exc), stream)
    except ApiError as exc:
        return _failure(exc, stream)
    except NotFound as exc:
        return _failure(not_found(kind_of(str(exc)), str(exc)), stream)
    detail = channel.detail  # plugin apps force detail
    if stream:
        return sse_response(
            stream_frames(
                channel,
                detail=detail,
                api_version=api_version,
                heartbeat_s=_heartbeat_of(request),
                retain_dataset_cite=retain,
                view=view,
            )
        )
    outcome = await channel.wait_done()
    if outcome.error is not None:
        return JSONResponse(envelope(code=500, message=outcome.error), status_code=500)
    body = completion_response(outcome, detail=detail, api_version=api_version, retain_dataset_cite=retain)
    if view is not None and "responseData" in body:
        body["responseData"] = view.responses(body["responseData"])
    return CompactJSONResponse(body)


async def _start_member_chat(
    request: Request,
    values: dict[str, Any],
    *,
    stream: bool,
    detail: bool,
    retain: bool,
    api_version: int,
    draft: bool,
) -> RunChannel | Response:
    """A chat by a key or a signed-in member: the started run, or the resumed stream's response."""
    chat = chat_of(request)
    auth = await authenticate(request)
    body = validate(ChatCompletionBody, values)  # after authentication: a bad key is a 401 first
    app_id = _resolve_app_id(auth, body.appId)
    app, owner = await load_app_and_owner(
        request, auth, app_id, "write" if draft else "read", chatting=not draft
    )
    resume_from = _last_event_id(request, body.lastEventId)
    chat_id = body.chatId
    if resume_from is not None and chat_id:
        found = await _own_channel(request, auth, app_id, owner, str(chat_id), detail=detail)
        if found is not None:
            return sse_response(
                stream_frames(
                    found,
                    detail=detail,
                    api_version=api_version,
                    after=resume_from,
                    heartbeat_s=_heartbeat_of(request),
                    resuming=True,
                    retain_dataset_cite=retain,
                )
            )
    workflow = None
    if draft and body.nodes is not None:
        workflow = check_workflow(values)
    chat_request = ChatRequest(
        team_id=auth.team_id,
        member_id=auth.member_id,
        app_id=app_id,
        messages=body.messages,
        chat_id=chat_id,
        stream=stream,
        detail=detail,
        variables=body.variables,
        response_chat_item_id=body.responseChatItemId or None,
        metadata=body.metadata,
        custom_uid=body.customUid or None,
        api_key_id=auth.api_key_id,
        source=_chat_source(auth, draft=draft),
        draft=draft,
        workflow=workflow,
        api_version=api_version,
        app=app,
        app_owner=owner,
    )
    return await chat.runs.start(chat_request)


# The chat routes validate their body themselves (after authentication, inside _run_chat) so that a
# streaming request is refused with an SSE error frame; ``documents`` only shows the model.
@router.api_route(
    "/api/v1/chat/completions",
    methods=ANY_METHOD,
    summary="Chat with an app (v1)",
    responses=chat_answers(),
    dependencies=[documents(ChatCompletionBody)],
)
async def completions_v1(request: Request) -> Response:
    return await _run_chat(request, api_version=1)


@router.api_route(
    "/api/v2/chat/completions",
    methods=ANY_METHOD,
    summary="Chat with an app (v2)",
    responses=chat_answers(),
    dependencies=[documents(ChatCompletionBody)],
)
async def completions_v2(request: Request) -> Response:
    return await _run_chat(request, api_version=2)


@router.api_route(
    "/api/core/chat/chatTest",
    methods=ANY_METHOD,
    summary="Chat with the app's draft",
    responses=chat_answers(),
    dependencies=[documents(ChatCompletionBody)],
)
async def chat_test(request: Request) -> Response:
    return await _run_chat(request, api_version=2, draft=True)


async def _own_channel(
    request: Request, auth: AuthContext, app_id: str, app_owner: str | None, chat_id: str, *, detail: bool
) -> RunChannel | RemoteChannel | None:
    """The chat's latest run frames when the chat is the caller's (stop and resume are the owner's),
    else None, as for a chat with no run."""
    chat = chat_of(request)
    caller = await chat_caller(request, auth, app_id, app_owner)
    allowed = await chat.history.may(auth.team_id, app_id, chat_id, caller, "write")
    if allowed is False:
        return None  # another caller's chat
    found = await chat.runs.channel(auth.team_id, app_id, chat_id, detail=detail)
    if allowed is None and isinstance(found, RunChannel) and not caller.same_owner(found.owner):
        return None  # a new chat's first turn, still running (not stored yet), of another caller
    return found


@router.api_route(
    "/api/v2/chat/stop", methods=ANY_METHOD, summary="Stop a running chat", responses=answers(Stopped)
)
async def stop_chat(
    request: Request, auth: AuthContext = Depends(authenticate), payload: ChatRef = parsed(ChatRef)
) -> dict[str, Any]:
    app_id = _resolve_app_id(auth, payload.appId)
    _, owner = await load_app_and_owner(request, auth, app_id, "read", chatting=True)
    chat_id = payload.chatId or ""
    if not chat_id:
        raise ApiError(400, "missingParams", "chatId: is required")
    channel = await _own_channel(request, auth, app_id, owner, chat_id, detail=False)
    stopped = channel is not None and await chat_of(request).runs.stop(auth.team_id, app_id, chat_id)
    return envelope({"success": stopped})


@router.api_route(
    "/api/v2/chat/resume",
    methods=ANY_METHOD,
    summary="Resume a dropped chat stream",
    responses=chat_answers(stream_only=True),
)
async def resume_chat(
    request: Request, auth: AuthContext = Depends(authenticate), payload: ResumeChat = parsed(ResumeChat)
) -> Response:
    app_id = _resolve_app_id(auth, payload.appId)
    _, owner = await load_app_and_owner(request, auth, app_id, "read", chatting=True)
    chat_id = payload.chatId or ""
    if not chat_id:
        raise ApiError(400, "missingParams", "chatId: is required")
    detail = True if payload.detail is None else payload.detail
    api_version = 1 if str(payload.version) == "1" else 2
    after = _last_event_id(request, payload.lastEventId) or 0
    channel = await _own_channel(request, auth, app_id, owner, chat_id, detail=detail)
    if channel is None:
        # no frames to follow: the answer's state in the database says why (a replica that died
        # leaves it interrupted); the client gets that in one definite frame
        reason, data_id = "mirrorUnavailable", ""
        caller = await chat_caller(request, auth, app_id, owner)
        if await chat_of(request).history.may(auth.team_id, app_id, chat_id, caller, "write"):
            data_id, state = await chat_of(request).history.last_answer_state(auth.team_id, app_id, chat_id)
            reason = "interrupted" if state == "interrupted" else reason
        body = {"reason": reason, "chatId": chat_id, **({"dataId": data_id} if data_id else {})}

        async def unavailable() -> Any:
            yield encode_frame("resumeUnavailable", body, detail=True)

        return sse_response(unavailable())
    return sse_response(
        stream_frames(
            channel,
            detail=detail,
            api_version=api_version,
            after=after,
            heartbeat_s=_heartbeat_of(request),
            resuming=True,
        )
    )
