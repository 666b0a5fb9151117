"""Chat files (spec §6): ``POST /api/core/chat/file/upload`` stores a file for one app, user and chat and
answers its key and a signed preview link; ``GET /api/files/preview`` serves such a link.

The upload is multipart: ``file`` plus ``appId``, ``chatId`` and optional ``customUid`` (the chat
entry's user; default the calling member), as form fields or as a JSON string in ``data``. A key made
for one app (an app key) may upload into its own app's chats. A share page's visitor sends ``shareId``
and ``outLinkUid`` (or FastGPT's ``outLinkAuthData``) instead of a key and uploads into their own chats
of the link's app, under their uid. Every upload counts against the caller's uploads a minute and the
team's storage quota (:mod:`fathom.server.uploads`); ``chatId``, ``customUid`` and the file name name
folders and files of the key, so ``.``, ``..``, ``/``, ``\\`` and control characters are a 400. The
file goes when its chat, its app or the chat item naming it is deleted. The preview route needs no
credentials (the link is signed); a bad or expired signature is a 403, a key that names no chat file of
this server (missing, another kind of file, made up) a 404 with the same answer.
"""

from __future__ import annotations

import mimetypes
from pathlib import PurePosixPath
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import AfterValidator, BaseModel, BeforeValidator, Field, StringConstraints
from pydantic_core import PydanticCustomError
from starlette.datastructures import UploadFile

from fathom.chat.chat_files import MAX_CHAT_FILE_BYTES, filename_of
from fathom.chat.chat_files import MAX_FILENAME_LENGTH as MAX_NAME
from fathom.chat.file_reader import DOCUMENT_FORMATS
from fathom.chat.ownership import ChatCaller
from fathom.security.files import PreviewUrlError
from fathom.server.auth import authenticate
from fathom.server.errors import ApiError, envelope
from fathom.server.json_body import parse_json
from fathom.server.routes.app_access import chat_caller, chat_of, load_app_and_owner, visitor_caller
from fathom.server.routes.common import platform_of
from fathom.server.routes.share_chat import is_share_request
from fathom.server.typed import ApiModel, ObjectId, answers, documents, validate
from fathom.server.uploads import admit_upload, check_file_name, member_or_key, name_problem, visitor
from fathom.store.protocols import NotFound

router = APIRouter(tags=["files"])

# what a chat may take: the formats the read-files node parses, and images for vision models
DOCUMENT_TYPES = DOCUMENT_FORMATS
IMAGE_TYPES = ("png", "jpg", "jpeg", "gif", "webp")
MAX_KEY_LENGTH = 500  # the stored name holds the whole key
_ID_SAFE = 128  # chatId / customUid, in characters


def _number_as_text(value: Any) -> Any:
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


def _blank_as_none(value: Any) -> Any:
    return None if value == "" else value


def _key_part(value: str) -> str:
    problem = name_problem(value)
    if len(value) > _ID_SAFE or problem:
        raise PydanticCustomError(
            "key_part",
            f"at most {_ID_SAFE} characters, not '.' or '..', without '/', '\\' or control characters",
        )
    return value


#: a chat id or user id that is a folder of the stored key: no '/', never '..'
KeyPart = Annotated[
    str, StringConstraints(min_length=1), AfterValidator(_key_part), BeforeValidator(_number_as_text)
]


class ChatFileForm(ApiModel):
    """The multipart form: ``file`` plus these fields (or them as a JSON object in a ``data`` field)."""

    appId: ObjectId
    chatId: KeyPart
    customUid: Annotated[KeyPart | None, BeforeValidator(_blank_as_none)] = Field(
        None, description="The chat entry's user (default the calling member)"
    )
    shareId: str | None = Field(None, description="A share-link visitor's link (instead of a key)")
    outLinkUid: str | None = Field(None, description="The visitor's id on that link")
    file: Any = Field(None, json_schema_extra={"type": "string", "format": "binary"})


class SavedChatFile(BaseModel):
    key: str = Field(description="Send it back in a file_url content part")
    previewUrl: str = Field(description="A signed link, valid for a while")
    name: str
    size: int


async def _form(request: Request) -> tuple[dict[str, Any], UploadFile]:
    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        raise ApiError(400, "invalidParams", "file: send a multipart/form-data body with a file field")
    form = await request.form()
    values: dict[str, Any] = {k: v for k, v in form.items() if isinstance(v, str) and k != "data"}
    raw = form.get("data")
    if isinstance(raw, str) and raw.strip():
        extra = parse_json(raw, "data")  # the body reader's rules (depth, huge integers, NUL …)
        if not isinstance(extra, dict):
            raise ApiError(400, "invalidParams", "data: must be a JSON object")
        values.update(extra)
    auth_data = values.pop("outLinkAuthData", None)  # FastGPT's share page sends the visitor so
    if isinstance(auth_data, dict):
        values = {**{k: v for k, v in auth_data.items() if k in ("shareId", "outLinkUid")}, **values}
    upload = form.get("file")
    if not isinstance(upload, UploadFile):
        raise ApiError(400, "missingParams", "file: is required")
    return values, upload


def _filename(upload: UploadFile) -> str:
    name = check_file_name((upload.filename or "").strip(), "file")
    if not name:
        raise ApiError(400, "invalidParams", "file: needs a file name")
    if len(name) > MAX_NAME:
        raise ApiError(400, "invalidParams", f"file: the name is longer than {MAX_NAME} characters")
    ext = PurePosixPath(name).suffix.lower().lstrip(".")
    if ext not in DOCUMENT_TYPES + IMAGE_TYPES:
        allowed = ", ".join(DOCUMENT_TYPES + IMAGE_TYPES)
        raise ApiError(400, "invalidParams", f"file: type .{ext or '?'} is not allowed; allowed: {allowed}")
    return name


@router.post(
    "/api/core/chat/file/upload",
    summary="Upload a file into a chat (multipart)",
    responses=answers(SavedChatFile),
    dependencies=[documents(ChatFileForm)],
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"multipart/form-data": {"schema": {"$ref": "#/components/schemas/ChatFileForm"}}},
        }
    },
)
async def upload_chat_file(request: Request) -> dict[str, Any]:
    values, upload = await _form(request)
    if is_share_request(request, values):
        return await _visitor_upload(request, values, upload)
    auth = await authenticate(request)
    form = validate(ChatFileForm, values)
    _, owner = await load_app_and_owner(request, auth, form.appId, "read", chatting=True)
    caller = await chat_caller(request, auth, form.appId, owner)
    await _check_chat(request, auth.team_id, form.appId, form.chatId, caller)
    await admit_upload(request, member_or_key(auth))
    uid = form.customUid or auth.member_id
    return await _save(request, auth.team_id, form.appId, uid, form.chatId, upload, auth.member_id)


async def _check_chat(request: Request, team_id: str, app_id: str, chat_id: str, caller: ChatCaller) -> None:
    """A file goes into a new chat or one the caller may write."""
    if await chat_of(request).history.may(team_id, app_id, chat_id, caller, "write") is False:
        raise ApiError(
            403, "unAuthChat", f"chatId: chat {chat_id} belongs to another caller; use a new chatId"
        )


async def _visitor_upload(request: Request, values: dict[str, Any], upload: UploadFile) -> dict[str, Any]:
    """A share page's visitor (``shareId`` + ``outLinkUid``, no key) uploads into their own chat."""
    form = validate(ChatFileForm, values)
    visit = await chat_of(request).share_links.admit_upload(form.shareId, form.outLinkUid)
    link = visit.link
    if form.appId != link.app_id:
        raise ApiError(403, "unAuthApp", "appId: this share link serves another app")
    await _check_chat(request, link.team_id, link.app_id, form.chatId, visitor_caller(visit))
    await admit_upload(request, visitor(link.id, visit.uid))
    return await _save(request, link.team_id, link.app_id, visit.uid, form.chatId, upload, link.member_id)


async def _save(
    request: Request, team_id: str, app_id: str, uid: str, chat_id: str, upload: UploadFile, member_id: str
) -> dict[str, Any]:
    name = _filename(upload)
    data = await upload.read(MAX_CHAT_FILE_BYTES + 1)
    if len(data) > MAX_CHAT_FILE_BYTES:
        raise ApiError(400, "invalidParams", f"file: larger than {MAX_CHAT_FILE_BYTES} bytes")
    if len(f"chat/app/{app_id}/{uid}/{chat_id}/{'0' * 24}-{name}") > MAX_KEY_LENGTH:
        raise ApiError(400, "invalidParams", f"file: the name makes a key longer than {MAX_KEY_LENGTH}")
    saved = await platform_of(request).chat_files.save(
        team_id,
        app_id=app_id,
        uid=uid,
        chat_id=chat_id,
        filename=name,
        data=data,
        content_type=mimetypes.guess_type(name)[0] or "application/octet-stream",  # never the client's
        member_id=member_id,
    )
    return envelope(
        {"key": saved.key, "previewUrl": saved.preview_url, "name": name, "size": saved.record.size}
    )


@router.get("/api/files/preview", include_in_schema=False)
async def preview_chat_file(request: Request) -> Response:
    """A signed link's bytes (no credentials: the signature is the grant)."""
    files = platform_of(request).chat_files
    try:
        record, data = await files.open_preview(str(request.url))
    except PreviewUrlError as exc:
        raise ApiError(403, "unAuthFile", str(exc)) from None
    except NotFound:
        raise ApiError(404, "fileNotFound", "file not found") from None
    name = filename_of(record.name, record)
    inline = (
        record.content_type.startswith(("image/", "text/plain")) or record.content_type == "application/pdf"
    )
    disposition = "inline" if inline else "attachment"
    return Response(
        data,
        media_type=record.content_type,
        headers={
            "Content-Disposition": f"{disposition}; filename*=UTF-8''{quote(name)}",
            "X-Content-Type-Options": "nosniff",
            "Cache-Control": "private, max-age=0",
            "Content-Security-Policy": "default-src 'none'; sandbox",
        },
    )
