"""The SSE response the chat routes return, under the ASGI 2.3 contract uvicorn speaks: the body is written
whole when the client stays, and the write ends (the body's generator closed) when the client leaves."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from fathom.server.sse import sse_response

SCOPE = {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "method": "POST", "headers": []}


async def test_a_client_that_stays_gets_every_frame_and_the_end_of_the_body() -> None:
    async def body() -> AsyncIterator[str]:
        for number in range(3):
            yield f"data: {number}\n\n"

    sent: list[dict[str, Any]] = []
    never = asyncio.Event()

    async def receive() -> dict[str, Any]:
        await never.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await sse_response(body())(SCOPE, receive, send)
    assert sent[0]["type"] == "http.response.start"
    assert b"".join(m.get("body", b"") for m in sent[1:]) == b"data: 0\n\ndata: 1\n\ndata: 2\n\n"
    assert sent[-1] == {"type": "http.response.body", "body": b"", "more_body": False}


async def test_a_client_that_leaves_ends_the_write_and_closes_the_body() -> None:
    closed = asyncio.Event()

    async def endless() -> AsyncIterator[str]:
        try:
            while True:
                yield "data: tick\n\n"
                await asyncio.sleep(0.01)
        finally:
            closed.set()

    writes = 0
    left = asyncio.Event()

    async def receive() -> dict[str, Any]:
        await left.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal writes
        writes += 1
        if writes == 4:
            left.set()  # the client goes away after a few frames

    await asyncio.wait_for(sse_response(endless())(SCOPE, receive, send), 5)
    await asyncio.wait_for(closed.wait(), 5)
    assert 4 <= writes < 10
    assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]  # the caller is not left cancelled
