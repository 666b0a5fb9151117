"""Adapter from an httpx-style async client to the sandbox's ``http_request`` handler.

The server builds it from the egress guard (``client_factory_request_handler(guard.client)``: a fresh
guarded client per request), so every request made by sandboxed code is checked, pinned and
size-limited by the guard. This module does not import the guard: the client is passed in.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Protocol

from fathom.sandbox.types import HttpRequestHandler

MAX_RESPONSE_BYTES = 2 * 1024 * 1024
MAX_TIMEOUT_SECONDS = 10.0


class AsyncHttpClient(Protocol):
    """The part of ``httpx.AsyncClient`` the adapter uses."""

    async def request(
        self,
        method: str,
        url: str,
        *,
        content: bytes | None = None,
        headers: dict[str, str] | None = None,
        timeout: float = MAX_TIMEOUT_SECONDS,  # noqa: ASYNC109 - httpx's own parameter
    ) -> Any: ...


class AsyncHttpClientContext(Protocol):
    """A client that is also its own async context manager (``httpx.AsyncClient``)."""

    async def __aenter__(self) -> AsyncHttpClient: ...

    async def __aexit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> Any: ...


def _client_request_handler(
    client: AsyncHttpClient,
    *,
    max_response_bytes: int = MAX_RESPONSE_BYTES,
    max_timeout: float = MAX_TIMEOUT_SECONDS,
) -> HttpRequestHandler:
    """A handler for ``http_request(url, method, headers, body, timeout)`` calls from the sandbox.

    Dict and list bodies are sent as JSON (``Content-Type: application/json`` unless set); timeouts
    are capped at ``max_timeout``; responses over ``max_response_bytes`` are refused with
    ``Response too large``. Returns ``{status, headers, data}`` (``data`` is the text body).
    """

    async def handle(request: dict[str, Any]) -> dict[str, Any]:
        url = request.get("url")
        if not isinstance(url, str) or not url:
            raise ValueError("http_request needs a URL")
        method = str(request.get("method") or "GET").upper()
        headers = {str(k): str(v) for k, v in (request.get("headers") or {}).items()}
        body = request.get("body")
        content: bytes | None = None
        if isinstance(body, dict | list):
            content = json.dumps(body, ensure_ascii=False).encode()
            if not any(k.lower() == "content-type" for k in headers):
                headers["Content-Type"] = "application/json"
        elif body is not None:
            content = body.encode() if isinstance(body, str) else str(body).encode()
        raw_timeout = request.get("timeout")
        timeout = min(float(raw_timeout), max_timeout) if raw_timeout else max_timeout
        response = await client.request(method, url, headers=headers, content=content, timeout=timeout)
        data = response.content
        if len(data) > max_response_bytes:
            raise RuntimeError("Response too large")
        return {"status": response.status_code, "headers": dict(response.headers), "data": response.text}

    return handle


def client_factory_request_handler(
    make_client: Callable[[], AsyncHttpClientContext],
    *,
    max_response_bytes: int = MAX_RESPONSE_BYTES,
    max_timeout: float = MAX_TIMEOUT_SECONDS,
) -> HttpRequestHandler:
    """Like :func:`client_request_handler`, with a client made for each request and closed after it.

    The server passes ``EgressGuard.client``: no client outlives a request, so a runner built once
    for the process holds no connection pool and needs no closing.
    """

    async def handle(request: dict[str, Any]) -> dict[str, Any]:
        async with make_client() as client:
            handler = _client_request_handler(
                client, max_response_bytes=max_response_bytes, max_timeout=max_timeout
            )
            return await handler(request)

    return handle
