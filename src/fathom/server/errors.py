"""FastGPT's response envelope ``{code, statusText, message, data}`` and the errors that fill it."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from fathom.store.protocols import Conflict, NotFound

# statusText -> (body code, default message), as FastGPT's errorCode tables spell them.
KNOWN_ERRORS: dict[str, tuple[int, str]] = {
    "unAuthorization": (403, "凭证错误"),
    "unAuthApiKey": (514, "Api Key 不合法"),
    "unExist": (506000, "资源不存在"),
    "unAuth": (506001, "无权操作"),
    "invalidParams": (507000, "无效的参数"),
    "payloadTooLarge": (413, "请求体过大"),
    "notFound": (404, "Not Found"),
    "conflict": (409, "Conflict"),
}


def envelope(
    data: Any = None, *, code: int = 200, status_text: str = "", message: str = ""
) -> dict[str, Any]:
    return {"code": code, "statusText": status_text, "message": message, "data": data}


class ApiError(Exception):
    """An error answered with the envelope and an HTTP status."""

    def __init__(self, http_status: int, status_text: str, message: str | None = None) -> None:
        code, default = KNOWN_ERRORS.get(status_text, (http_status, ""))
        self.http_status = http_status
        self.code = code
        self.status_text = status_text
        self.message = message or default
        super().__init__(self.message)

    def response(self) -> JSONResponse:
        body = envelope(code=self.code, status_text=self.status_text, message=self.message)
        return JSONResponse(body, status_code=self.http_status)


def unauthorized(message: str | None = None, status_text: str = "unAuthorization") -> ApiError:
    return ApiError(401, status_text, message)


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
        return ApiError(404, "unExist", str(exc)).response()

    @app.exception_handler(Conflict)
    async def _conflict(_: Request, exc: Conflict) -> JSONResponse:
        return ApiError(409, "conflict", str(exc)).response()

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        text = "notFound" if exc.status_code == 404 else ""
        return ApiError(exc.status_code, text, str(exc.detail)).response()

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        import logging

        logging.getLogger("fathom.server").exception(
            "unhandled error on %s %s", request.method, request.url.path
        )
        return JSONResponse(envelope(code=500, message="Internal server error"), status_code=500)
