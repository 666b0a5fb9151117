"""FastGPT's response envelope ``{code, statusText, message, data}`` and the errors that fill it.

``FASTGPT_ERRORS`` is FastGPT's table (``packages/global/common/error/errorCode.ts`` and ``code/*.ts``):
``statusText`` → (body ``code``, FastGPT's message). A named error's ``message`` starts with FastGPT's
message; where Fathom knows more (which key, which id) it follows after ``": "``. Validation failures
(``invalidParams``, ``missingParams``) name the field instead, as FastGPT's own schema errors do.
FastGPT's *generic* errors (a thrown string: ``messages is empty``, ``Data is too long, max 200``)
keep ``code`` 500, an empty ``statusText`` and FastGPT's exact string. Unlike FastGPT, which answers
every error with HTTP 500 (or 200), the HTTP status says what went wrong (400, 401, 403, 404, 413).
"""

from __future__ import annotations

import logging
import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from fathom.store.protocols import Conflict, NotFound

log = logging.getLogger("fathom.server")

GENERIC_CODE = 500

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
    "invitationInvalid": (410, "Invitation link invalid"),
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


def fastgpt_message(status_text: str, detail: str | None) -> str:
    """FastGPT's message for ``status_text``, then Fathom's ``detail`` (unless it already starts so)."""
    _, text = FASTGPT_ERRORS.get(status_text, (GENERIC_CODE, ""))
    if not detail:
        return text
    if status_text in FIELD_ERRORS or not text or detail.startswith(text):
        return detail
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
    ) -> None:
        code, _ = FASTGPT_ERRORS.get(status_text, (GENERIC_CODE, ""))
        self.headers = headers
        self.http_status = http_status
        self.code = code
        self.status_text = status_text if status_text in FASTGPT_ERRORS else ""
        self.message = fastgpt_message(self.status_text, message) or (message or "")
        super().__init__(self.message)

    def body(self) -> dict[str, Any]:
        return envelope(code=self.code, status_text=self.status_text, message=self.message)

    def response(self) -> JSONResponse:
        return JSONResponse(self.body(), status_code=self.http_status, headers=self.headers)


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


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for error in exc.errors()[:5]:
        location = ".".join(str(p) for p in error.get("loc", ()) if p != "body") or "body"
        parts.append(f"{location}: {error.get('msg', 'invalid')}")
    return "; ".join(parts)


def install_error_handlers(app: FastAPI) -> None:
    """Every error leaves the server as the envelope with a fitting HTTP status."""

    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return exc.response()

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        return ApiError(400, "invalidParams", _validation_message(exc)).response()

    @app.exception_handler(NotFound)
    async def _not_found(_: Request, exc: NotFound) -> JSONResponse:
        message = str(exc)
        return not_found(kind_of(message), message).response()

    @app.exception_handler(Conflict)
    async def _conflict(_: Request, exc: Conflict) -> JSONResponse:
        return ApiError(409, "conflict", str(exc)).response()

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        text = "notFound" if exc.status_code == 404 else ""
        return ApiError(exc.status_code, text, str(exc.detail)).response()

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        # the server state behind this connection is unknown: say so, and let the client open a new one
        return JSONResponse(
            envelope(code=GENERIC_CODE, message="Internal server error"),
            status_code=500,
            headers={"Connection": "close"},
        )
