"""Reject request bodies over the configured size with 413 and the envelope, before a handler reads them."""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from fathom.server.errors import FASTGPT_ERRORS, envelope, fastgpt_message, language_of


class BodySizeLimitMiddleware:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def _reject(self, scope: Scope, send: Send) -> None:
        code, _ = FASTGPT_ERRORS["payloadTooLarge"]
        # outside the app's error-language middleware: read the caller's language here
        accept = next((value for name, value in scope.get("headers", []) if name == b"accept-language"), b"")
        language = language_of(accept.decode("latin-1"))
        detail = f"request body exceeds {self.max_bytes} bytes (FATHOM_MAX_BODY_BYTES)"
        message = fastgpt_message("payloadTooLarge", detail, language)
        body = json.dumps(envelope(code=code, status_text="payloadTooLarge", message=message)).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"content-language", language.encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length" and value.isdigit() and int(value) > self.max_bytes:
                await self._reject(scope, send)
                return
        declared = any(name == b"content-length" for name, _ in scope.get("headers", []))
        if declared:
            await self.app(scope, receive, send)
            return
        # A streamed (chunked) body: read it up to the limit before the handler runs, then replay it.
        chunks: list[bytes] = []
        received = 0
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, _replay([message]), send)
                return
            chunk = message.get("body", b"")
            received += len(chunk)
            if received > self.max_bytes:
                await self._reject(scope, send)
                return
            chunks.append(chunk)
            more = bool(message.get("more_body", False))
        await self.app(
            scope,
            _replay([{"type": "http.request", "body": b"".join(chunks), "more_body": False}], receive),
            send,
        )


def _replay(messages: list[Message], then: Receive | None = None) -> Receive:
    pending = list(messages)

    async def receive() -> Message:
        if pending:
            return pending.pop(0)
        if then is not None:
            return await then()
        return {"type": "http.disconnect"}

    return receive
