"""Server-sent events as FastGPT writes them, plus numbered frames for resumption.

Frame: ``id: <seq>`` (Fathom; lets a client reconnect with ``Last-Event-ID``), ``event: <name>``
(only with ``detail=true``, and always for ``error``), ``data: <json or [DONE]>``, blank line.
A heartbeat (an empty ``answer`` chunk, no id) is written after ``heartbeat_s`` idle seconds.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from fathom import json_text
from fathom.chat import RunChannel, frame_visible, text_adapt_gpt_response
from fathom.chat.channel import Frame
from fathom.chat.cite import CiteStreamFilter
from fathom.chat.fanout import RemoteChannel
from fathom.chat.share_view import ShareView

log = logging.getLogger("fathom.server")

SSE_HEADERS = {
    "Content-Type": "text/event-stream;charset=utf-8",
    "Cache-Control": "no-cache, no-transform",
    "X-Accel-Buffering": "no",
    "Access-Control-Allow-Origin": "*",
    "Connection": "keep-alive",
}
HEARTBEAT_SECONDS = 10.0


def _data(payload: Any) -> str:
    return payload if isinstance(payload, str) else json_text.dumps(payload)


def encode_frame(event: str, payload: Any, *, detail: bool, seq: int | None = None) -> str:
    """One SSE frame as FastGPT writes it (``event:`` line when detail, or for errors)."""
    lines = []
    if seq is not None:
        lines.append(f"id: {seq}")
    if detail or event == "error":
        lines.append(f"event: {event}")
    lines.append(f"data: {_data(payload)}")
    return "\n".join(lines) + "\n\n"


def _heartbeat_frame(*, detail: bool) -> str:
    return encode_frame("answer", text_adapt_gpt_response(""), detail=detail)


async def stream_frames(
    channel: RunChannel | RemoteChannel,
    *,
    detail: bool,
    api_version: int,
    after: int = 0,
    heartbeat_s: float = HEARTBEAT_SECONDS,
    resuming: bool = False,
    retain_dataset_cite: bool = True,
    view: ShareView | None = None,
) -> AsyncIterator[str]:
    """The client's view of a run from frame ``after`` on, with heartbeats while it is quiet; answer
    text without dataset citation markers unless ``retain_dataset_cite`` (FastGPT's request flag);
    ``view``: what a share link's visitor may see of it."""
    cites = CiteStreamFilter(retain_dataset_cite)
    if resuming and detail:
        yield encode_frame("resumePhase", {"phase": "catchup", "lastEventId": after}, detail=True)
    caught_up = not resuming
    # a local run's frames are read directly (the hot path); another replica's through _batches
    batches = (
        channel.follow(after, heartbeat_s)
        if isinstance(channel, RunChannel)
        else _batches(channel, after, heartbeat_s)
    )
    try:
        async for batch in batches:
            if batch is None:
                yield _heartbeat_frame(detail=detail)
                continue
            out: list[str] = []  # the batch's frames leave in one write
            for frame in batch:
                if not caught_up and frame.seq >= len(channel.frames) and not channel.done:
                    caught_up = True
                    if detail:
                        out.append(encode_frame("resumePhase", {"phase": "live"}, detail=True))
                if not frame_visible(frame, detail=detail, api_version=api_version):
                    continue
                if view is not None:
                    shown = view.frame(frame)
                    if shown is None:
                        continue
                    frame = shown
                content = _answer_content(frame)
                if content is not None:
                    data = _with_content(frame.data, cites.feed(content))
                    out.append(encode_frame(frame.event, data, detail=detail, seq=frame.seq))
                    continue
                if cites.holding:
                    out.append(encode_frame("answer", text_adapt_gpt_response(cites.flush()), detail=detail))
                out.append(encode_frame(frame.event, frame.data, detail=detail, seq=frame.seq))
            if out:
                yield "".join(out)
    except MirrorLost:
        yield encode_frame("resumeUnavailable", {"reason": "mirrorUnavailable"}, detail=True)
        return
    if cites.holding:
        yield encode_frame("answer", text_adapt_gpt_response(cites.flush()), detail=detail)
    if getattr(channel, "interrupted", False):  # its replica died: no frame will ever follow
        yield encode_frame(
            "resumeUnavailable", {"reason": "interrupted", "lastEventId": len(channel.frames)}, detail=True
        )
    elif resuming and detail:
        yield encode_frame("resumeCompleted", {"lastEventId": len(channel.frames)}, detail=True)


class MirrorLost(Exception):
    """Another replica's frames could not be read any more (Redis gone past the reader's patience)."""


async def _batches(
    channel: RemoteChannel, after: int, heartbeat_s: float
) -> AsyncIterator[list[Frame] | None]:
    """``channel.follow``, with a failure to read another replica's mirror as :class:`MirrorLost` (its
    text names Redis's host and port: logs only)."""
    try:
        async for batch in channel.follow(after, heartbeat_s):
            yield batch
    except Exception as exc:
        log.warning("resuming a chat run: its frames could not be read (%s)", type(exc).__name__)
        raise MirrorLost from None


def _answer_content(frame: Frame) -> str | None:
    """The text of an answer chunk (``choices[0].delta.content``), else None."""
    if frame.event not in ("answer", "fastAnswer") or not isinstance(frame.data, dict):
        return None
    choices = frame.data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    content = (choices[0].get("delta") or {}).get("content")
    return content if isinstance(content, str) and content else None


def _with_content(data: dict[str, Any], content: str) -> dict[str, Any]:
    choice = data["choices"][0]
    return {**data, "choices": [{**choice, "delta": {**choice["delta"], "content": content}}]}


async def _single_frames(frames: list[Frame], *, detail: bool) -> AsyncIterator[str]:
    for frame in frames:
        yield encode_frame(frame.event, frame.data, detail=detail)


class EventStreamResponse(StreamingResponse):
    """A streamed response written by the request's own task, with a plain asyncio task watching for
    the client's disconnect (which ends the write), instead of Starlette's anyio task group of two
    tasks per response under an ASGI 2.3 server such as uvicorn: about 5 % of a short chat stream's
    server CPU. What the client receives is the same."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        writer = asyncio.current_task()
        if scope["type"] != "http" or writer is None:
            await super().__call__(scope, receive, send)
            return
        left = False

        async def watch() -> None:
            nonlocal left
            while (await receive())["type"] != "http.disconnect":
                pass
            left = True
            writer.cancel()

        watcher = asyncio.get_running_loop().create_task(watch())
        try:
            await self.stream_response(send)
        except asyncio.CancelledError:
            if not left:
                raise
            writer.uncancel()  # the client went away: the write ends, the run goes on (resumable)
            return
        finally:
            watcher.cancel()
        if self.background is not None:
            await self.background()


def sse_response(body: AsyncIterator[str]) -> StreamingResponse:
    """A streaming response with FastGPT's SSE headers."""
    return EventStreamResponse(body, headers=dict(SSE_HEADERS))


def error_stream(message: str | dict[str, Any]) -> StreamingResponse:
    """A stream holding one ``error`` event (FastGPT's answer to a failed streaming request)."""
    payload = message if isinstance(message, dict) else {"message": message}
    return sse_response(_single_frames([Frame(0, "error", payload)], detail=False))
