"""FastGPT's response envelope ``{code, statusText, message, data}`` and the errors that fill it.

``FASTGPT_ERRORS`` is FastGPT's table (``packages/global/common/error/errorCode.ts`` and ``code/*.ts``):
``statusText`` → (body ``code``, FastGPT's message). A named error's ``message`` starts with FastGPT's
message; where Fathom knows more (which key, which id) it follows after ``": "``. Validation failures
(``invalidParams``, ``missingParams``) name the field instead, as FastGPT's own schema errors do.
FastGPT's *generic* errors (a thrown string: ``messages is empty``, ``Data is too long, max 200``)
keep ``code`` 500, an empty ``statusText`` and FastGPT's exact string. Unlike FastGPT, which answers
every error with HTTP 500 (or 200), the HTTP status says what went wrong (400, 401, 403, 404, 413).

The message's prefix is in the caller's language (:data:`LABELS`): English, or Chinese — FastGPT's own
text — when the request's ``Accept-Language`` prefers Chinese (:func:`language_of`, set per request by
:class:`ErrorLanguageMiddleware`). ``code`` and ``statusText`` never change with the language.
"""

from __future__ import annotations

import logging
import re
from contextvars import ContextVar
from typing import Any, Literal

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Receive, Scope, Send

from fathom.chat import ChatError
from fathom.datasets import UnknownRerankModel
from fathom.datasets.errors import (
    CollectionMissing,
    DatasetRequestError,
    EmbeddingModelNotConfigured,
    InvalidDatasetRequest,
    RecordMissing,
    TagExists,
    TagMissing,
)
from fathom.security.accounts import AccountError
from fathom.store.errors import database_errors, database_unavailable
from fathom.store.files import StorageQuotaExceeded
from fathom.store.protocols import Conflict, NotFound

log = logging.getLogger("fathom.server")

GENERIC_CODE = 500
DATABASE_UNAVAILABLE_MESSAGE = "Database unavailable; retry in a few seconds"
DATABASE_RETRY_AFTER_S = 5

FASTGPT_ERRORS: dict[str, tuple[int, str]] = {
    # errorCode.ts
    "unAuthorization": (403, "凭证错误"),
    "insufficientQuota": (510, "账号余额不足"),
    "unAuthModel": (511, "无权操作该模型"),
    "unAuthApiKey": (514, "Api Key 不合法"),
    # code/dataset.ts (501000 + position)
    "sameApiCollection": (501000, "相同 API 集合已存在"),
    "notSupportSync": (501001, "该集合不支持同步"),
    "unExistDataset": (501002, "知识库不存在"),
    "unExistCollection": (501003, "集合不存在"),
    "unAuthDataset": (501004, "未授权知识库"),
    "unAuthDatasetCollection": (501005, "未授权知识库集合"),
    "unAuthDatasetData": (501006, "未授权知识库数据"),
    "unAuthDatasetFile": (501007, "未授权知识库文件"),
    "unCreateCollection": (501008, "无法创建集合"),
    "unLinkCollection": (501009, "无法关联集合"),
    "invalidVectorModelOrQAModel": (501010, "无效的向量模型或 QA 模型"),
    # code/user.ts (503000 +): a wrong username or password on sign-in
    "account_psw_error": (503002, "账号或密码错误"),
    # code/app.ts (502000 +)
    "appUnExist": (502000, "应用不存在"),
    "unAuthApp": (502001, "未授权应用"),
    "invalidOwner": (502002, "无效的拥有者"),
    "invalidAppType": (502003, "无效的应用类型"),
    # code/chat.ts (504000 +)
    "unAuthChat": (504000, "无权操作该对话记录"),
    # code/outLink.ts (505000 + position; linkUnInvalid keeps its own 501)
    "outlinkUnExist": (505000, "分享链接不存在"),
    "unAuthLink": (505001, "分享链接无效"),
    "linkUnInvalid": (501, "分享链接无效"),
    "unAuthUser": (505003, "身份校验失败"),
    "linkExpired": (505005, "分享链接已过期"),
    "outLinkUsedPointsExceed": (505007, "链接超出使用限制"),
    "outLinkOverFrequency": (505008, "每分钟请求次数超出限制"),
    # code/openapi.ts (506000 +)
    "openapiUnExist": (506000, "API Key 不存在"),
    "openapiUnAuth": (506001, "未授权"),
    "openapiExceedLimit": (506002, "超出限制"),
    # code/common.ts (507000 +); its unAuthFile replaces errorCode.ts's 513 in ERROR_RESPONSE
    "invalidParams": (507000, "参数无效"),
    "invalidResource": (507001, "无效资源"),
    "fileNotFound": (507002, "文件不存在"),
    "unAuthFile": (507003, "未授权文件"),
    "missingParams": (507004, "缺少参数"),
    # Fathom's own, for conditions FastGPT leaves to its web server
    "payloadTooLarge": (413, "请求体过大"),
    "notFound": (404, "Not Found"),
    "conflict": (409, "Conflict"),
    # accounts (issue 19)
    "csrfTokenInvalid": (403, "CSRF token missing or wrong"),
    "tooManyRequests": (429, "Too many requests"),
    # uploads (issue 28)
    "teamStorageExceeded": (413, "Team file storage is full"),
    "invitationInvalid": (410, "Invitation link invalid"),
    # workflow checks before publishing (issue 31); ``data.problems`` lists them
    "workflowCheckFailed": (400, "Workflow check failed"),
}
#: statusText → the message prefix in English and in Chinese (FastGPT's own text where it has one); the
#: console shows the same labels (``web/src/errors.json``; tests/console/test_console_error_labels.py)
LABELS: dict[str, tuple[str, str]] = {
    "unAuthorization": ("Invalid credentials", "凭证错误"),
    "insufficientQuota": ("Insufficient account balance", "账号余额不足"),
    "unAuthModel": ("No permission to use this model", "无权操作该模型"),
    "unAuthApiKey": ("Invalid API key", "Api Key 不合法"),
    "sameApiCollection": ("The same API collection already exists", "相同 API 集合已存在"),
    "notSupportSync": ("This collection does not support sync", "该集合不支持同步"),
    "unExistDataset": ("Knowledge base not found", "知识库不存在"),
    "unExistCollection": ("Collection not found", "集合不存在"),
    "unAuthDataset": ("No access to this knowledge base", "未授权知识库"),
    "unAuthDatasetCollection": ("No access to this collection", "未授权知识库集合"),
    "unAuthDatasetData": ("No access to this knowledge base data", "未授权知识库数据"),
    "unAuthDatasetFile": ("No access to this knowledge base file", "未授权知识库文件"),
    "unCreateCollection": ("Cannot create the collection", "无法创建集合"),
    "unLinkCollection": ("Cannot link the collection", "无法关联集合"),
    "invalidVectorModelOrQAModel": ("Invalid embedding model or QA model", "无效的向量模型或 QA 模型"),
    "account_psw_error": ("Wrong username or password", "账号或密码错误"),
    "appUnExist": ("App not found", "应用不存在"),
    "unAuthApp": ("No access to this app", "未授权应用"),
    "invalidOwner": ("Invalid owner", "无效的拥有者"),
    "invalidAppType": ("Invalid app type", "无效的应用类型"),
    "unAuthChat": ("No permission to use this chat record", "无权操作该对话记录"),
    "outlinkUnExist": ("Share link not found", "分享链接不存在"),
    "unAuthLink": ("Invalid share link", "分享链接无效"),
    "linkUnInvalid": ("Invalid share link", "分享链接无效"),
    "unAuthUser": ("Identity check failed", "身份校验失败"),
    "linkExpired": ("This share link has expired", "分享链接已过期"),
    "outLinkUsedPointsExceed": ("This share link has used up its points", "链接超出使用限制"),
    "outLinkOverFrequency": ("Too many requests this minute", "每分钟请求次数超出限制"),
    "openapiUnExist": ("API key not found", "API Key 不存在"),
    "openapiUnAuth": ("Unauthorized", "未授权"),
    "openapiExceedLimit": ("Limit exceeded", "超出限制"),
    "invalidParams": ("Invalid parameters", "参数无效"),
    "invalidResource": ("Invalid resource", "无效资源"),
    "fileNotFound": ("File not found", "文件不存在"),
    "unAuthFile": ("No access to this file", "未授权文件"),
    "missingParams": ("Missing parameters", "缺少参数"),
    "payloadTooLarge": ("Request body too large", "请求体过大"),
    "notFound": ("Not Found", "未找到"),
    "conflict": ("Conflict", "冲突"),
    "csrfTokenInvalid": ("CSRF token missing or wrong", "CSRF 令牌缺失或错误"),
    "tooManyRequests": ("Too many requests", "请求过于频繁"),
    "teamStorageExceeded": ("Team file storage is full", "团队文件存储空间已满"),
    "invitationInvalid": ("Invitation link invalid", "邀请链接无效"),
    "workflowCheckFailed": ("Workflow check failed", "工作流检查未通过"),
}
#: errors whose message names the field (FastGPT's schema errors do the same), not FastGPT's fixed text
FIELD_ERRORS = frozenset({"invalidParams", "missingParams"})

#: FastGPT's error when a record of this kind does not exist ("" = its generic error, message as given)
MISSING: dict[str, tuple[str, str]] = {
    "app": ("appUnExist", ""),
    "dataset": ("unExistDataset", ""),
    "collection": ("unExistCollection", ""),
    "data": ("", "Data not found"),
    "chat": ("unAuthChat", ""),
    "chat item": ("unAuthChat", ""),
    "api key": ("openapiUnExist", ""),
    "file": ("fileNotFound", ""),
    "share link": ("outlinkUnExist", ""),
}
#: FastGPT's error when the caller may not use a record of this kind
FORBIDDEN: dict[str, str] = {
    "app": "unAuthApp",
    "dataset": "unAuthDataset",
    "collection": "unAuthDatasetCollection",
    "data": "unAuthDatasetData",
    "chat": "unAuthChat",
    "api key": "openapiUnAuth",
}
_KIND = re.compile(r"^(chat item|api key|share link|app|dataset|collection|data|chat|file)\b")


def envelope(
    data: Any = None, *, code: int = 200, status_text: str = "", message: str = ""
) -> dict[str, Any]:
    return {"code": code, "statusText": status_text, "message": message, "data": data}


Language = Literal["en", "zh"]
_LANGUAGE: ContextVar[Language] = ContextVar("fathom_error_language", default="en")


def language_of(accept_language: str | None) -> Language:
    """``zh`` when an ``Accept-Language`` header ranks a Chinese tag (``zh``, ``zh-CN``, ``zh-Hant`` …) above
    every English one, else ``en`` (also for a missing header, ``*`` or only other languages)."""
    if not accept_language or "zh" not in accept_language.lower():
        return "en"
    best: tuple[float, int, Language] | None = None
    for position, part in enumerate(accept_language.split(",")):
        tag, _, params = part.strip().lower().partition(";")
        primary = tag.strip().split("-", 1)[0]
        if primary not in ("en", "zh"):
            continue
        quality = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if quality > 0 and (best is None or (quality, -position) > best[:2]):
            best = (quality, -position, "zh" if primary == "zh" else "en")
    return best[2] if best else "en"


class ErrorLanguageMiddleware:
    """Reads each HTTP request's ``Accept-Language`` into the language error messages are written in."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        header = next((v for k, v in scope["headers"] if k == b"accept-language"), None)
        token = _LANGUAGE.set(language_of(header.decode("latin-1")) if header else "en")
        try:
            await self.app(scope, receive, send)
        finally:
            _LANGUAGE.reset(token)


def fastgpt_message(status_text: str, detail: str | None, language: Language | None = None) -> str:
    """The label of ``status_text`` in ``language`` (default: the request's), then Fathom's ``detail``
    (unless it already starts with a label of that error)."""
    english, chinese = LABELS.get(status_text, ("", ""))
    text = chinese if (language or _LANGUAGE.get()) == "zh" else english
    if not detail:
        return text
    if status_text in FIELD_ERRORS or not text:
        return detail
    for label in (english, chinese):
        if detail.startswith(label):
            return text + detail[len(label) :]
    return f"{text}: {detail}"


class ApiError(Exception):
    """An error answered with the envelope and an HTTP status.

    ``status_text`` is a key of :data:`FASTGPT_ERRORS`; empty means FastGPT's generic error (body code
    500, ``message`` exactly as given)."""

    def __init__(
        self,
        http_status: int,
        status_text: str,
        message: str | None = None,
        headers: dict[str, str] | None = None,
        data: Any = None,
    ) -> None:
        code, _ = FASTGPT_ERRORS.get(status_text, (GENERIC_CODE, ""))
        self.headers = headers
        self.data = data
        self.http_status = http_status
        self.code = code
        self.status_text = status_text if status_text in FASTGPT_ERRORS else ""
        self.detail = message
        super().__init__(self.message)

    @property
    def message(self) -> str:
        """The message in the current request's language (English outside a request)."""
        return fastgpt_message(self.status_text, self.detail) or (self.detail or "")

    def body(self) -> dict[str, Any]:
        return envelope(self.data, code=self.code, status_text=self.status_text, message=self.message)

    def response(self) -> JSONResponse:
        headers = {"Content-Language": _LANGUAGE.get(), **(self.headers or {})}
        return JSONResponse(self.body(), status_code=self.http_status, headers=headers)


def unauthorized(message: str | None = None, status_text: str = "unAuthorization") -> ApiError:
    return ApiError(401, status_text, message)


def not_found(kind: str, detail: str) -> ApiError:
    """404 with FastGPT's error for a missing record of ``kind`` (``app``, ``dataset``, ...)."""
    status_text, generic = MISSING.get(kind, ("", ""))
    return ApiError(404, status_text, generic or detail)


def forbidden_error(kind: str, detail: str) -> ApiError:
    """403 with FastGPT's error for a record of ``kind`` the caller may not use."""
    return ApiError(403, FORBIDDEN.get(kind, "unAuthApp"), detail)


def kind_of(message: str) -> str:
    """The record kind a store ``NotFound`` message names (``"app 65ab… not found"`` → ``app``)."""
    match = _KIND.match(message)
    return match.group(1) if match else ""


def chat_error(exc: ChatError) -> ApiError:
    """The envelope error for a chat service refusal. FastGPT sends a bad request (no app key,
    ``messages is empty``, ...) as its generic error, body code 500; the body keeps that code, the
    HTTP status is 400 (the request is at fault, not the server)."""
    problems = getattr(exc, "problems", None)
    data = {"problems": problems} if problems is not None else None
    error = ApiError(exc.http_status, exc.status_text, exc.message, data=data)
    if exc.http_status == 500 and not exc.status_text:
        error.http_status = 400
    return error


def _account_error(exc: AccountError) -> ApiError:
    """The envelope error for an account service refusal (sign-in, passwords, members, invitations)."""
    text = f"{exc.field}: {exc}" if exc.field else str(exc)
    if exc.kind == "rate_limited":
        headers = {"Retry-After": str(exc.retry_after or 1)}
        return ApiError(429, "tooManyRequests", text, headers=headers)
    if exc.kind == "credentials" and exc.field is None:  # FastGPT's UserErrEnum.account_psw_error
        return ApiError(401, "account_psw_error")  # its label says it all: "Wrong username or password"
    if exc.kind == "gone":
        return ApiError(410, "invitationInvalid", text)
    if exc.kind == "taken":
        return ApiError(409, "conflict", text)
    if exc.kind == "forbidden":
        return forbidden_error("api key", str(exc))
    return ApiError(400, "invalidParams", text)


#: refusal → (HTTP status, FastGPT statusText)
_ANSWERS: dict[type[Exception], tuple[int, str]] = {
    InvalidDatasetRequest: (400, "invalidParams"),
    UnknownRerankModel: (400, "invalidParams"),
    EmbeddingModelNotConfigured: (400, ""),
    TagExists: (409, ""),
    TagMissing: (404, ""),
    CollectionMissing: (404, "unExistCollection"),
}


def _dataset_error(exc: DatasetRequestError | UnknownRerankModel) -> ApiError:
    """The FastGPT answer of a knowledge-base refusal."""
    if isinstance(exc, RecordMissing):
        return not_found(exc.kind, str(exc))
    status, status_text = _ANSWERS.get(type(exc), (400, "invalidParams"))
    return ApiError(status, status_text, str(exc))


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for error in exc.errors()[:5]:
        location = ".".join(str(p) for p in error.get("loc", ()) if p != "body") or "body"
        parts.append(f"{location}: {error.get('msg', 'invalid')}")
    return "; ".join(parts)


def install_error_handlers(app: FastAPI) -> None:
    """Every error leaves the server as the envelope with a fitting HTTP status, its message in the
    caller's language."""
    app.add_middleware(ErrorLanguageMiddleware)

    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return exc.response()

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        return ApiError(400, "invalidParams", _validation_message(exc)).response()

    @app.exception_handler(ChatError)
    async def _chat(_: Request, exc: ChatError) -> JSONResponse:
        return chat_error(exc).response()

    @app.exception_handler(AccountError)
    async def _account(_: Request, exc: AccountError) -> JSONResponse:
        return _account_error(exc).response()

    @app.exception_handler(DatasetRequestError)
    @app.exception_handler(UnknownRerankModel)
    async def _dataset(_: Request, exc: DatasetRequestError | UnknownRerankModel) -> JSONResponse:
        return _dataset_error(exc).response()

    @app.exception_handler(NotFound)
    async def _not_found(_: Request, exc: NotFound) -> JSONResponse:
        message = str(exc)
        return not_found(kind_of(message), message).response()

    @app.exception_handler(Conflict)
    async def _conflict(_: Request, exc: Conflict) -> JSONResponse:
        return ApiError(409, "conflict", str(exc)).response()

    @app.exception_handler(StorageQuotaExceeded)
    async def _quota(_: Request, exc: StorageQuotaExceeded) -> JSONResponse:
        return ApiError(413, "teamStorageExceeded", f"file: {exc}").response()

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        text = "notFound" if exc.status_code == 404 else ""
        return ApiError(exc.status_code, text, str(exc.detail)).response()

    async def _database(request: Request, exc: Exception) -> JSONResponse:
        if not database_unavailable(exc):
            return await _unexpected(request, exc)
        # an outage, not a bug: say so (the driver's text names the host and port: logs only) and when
        # to retry; handled here, the connection stays usable
        log.warning("database unavailable on %s %s: %s", request.method, request.url.path, exc)
        return JSONResponse(
            envelope(code=503, message=DATABASE_UNAVAILABLE_MESSAGE),
            status_code=503,
            headers={"Retry-After": str(DATABASE_RETRY_AFTER_S)},
        )

    for error in database_errors():
        app.add_exception_handler(error, _database)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        # the server state behind this connection is unknown: say so, and let the client open a new one
        return JSONResponse(
            envelope(code=GENERIC_CODE, message="Internal server error"),
            status_code=500,
            headers={"Connection": "close"},
        )
