"""The frames of one chat run, numbered, kept after the run ends so a dropped client can resume.

A :class:`RunChannel` is what the run writes (every SSE-worthy event, in order, with a sequence
number) and what any number of readers follow (the request that started the run, a reconnecting
client with ``Last-Event-ID``). :class:`RunRegistry` finds a chat's channel and stops its run.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

ChatKey = tuple[str, str, str]  # (team id, app id, chat id)

DONE = "[DONE]"


@dataclass(frozen=True, slots=True)
class Frame:
    """One SSE frame: sequence number (the SSE ``id``), FastGPT event name, JSON-ready payload."""

    seq: int
    event: str
    data: Any


@dataclass
class RunChannel:
    """Numbered frames of one run, a stop signal, and the run's final outcome once it ended."""

    key: ChatKey
    response_chat_item_id: str
    detail: bool = False
    frames: list[Frame] = field(default_factory=list)
    done: bool = False
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    outcome: Any = None
    finished_at: float | None = None
    listeners: list[Callable[[Frame | None], None]] = field(default_factory=list)
    owner: Any = None  # who started the run (a ChatCaller): stop and resume are theirs
    _waiters: list[asyncio.Future[bool]] = field(default_factory=list)

    def push(self, event: str, data: Any) -> Frame:
        frame = Frame(len(self.frames) + 1, event, data)
        self.frames.append(frame)
        for listener in self.listeners:
            listener(frame)
        self._notify()
        return frame

    def close(self, outcome: Any = None) -> None:
        self.outcome = outcome
        self.done = True
        self.finished_at = time.monotonic()
        for listener in self.listeners:
            listener(None)
        self._notify()

    def _notify(self) -> None:
        """Wake every reader waiting for a frame (a future each: no task per frame)."""
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(True)

    async def wait_after(self, seq: int, timeout: float | None) -> list[Frame]:  # noqa: ASYNC109
        """Frames numbered above ``seq``; waits up to ``timeout`` for one (empty list on timeout). The
        timeout is a timer on the reader's future (``asyncio.wait_for`` costs a task and more per wait)."""
        if len(self.frames) > seq or self.done:
            return self.frames[seq:]
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[bool] = loop.create_future()
        self._waiters.append(waiter)
        timer = None if timeout is None else loop.call_later(timeout, _expire, waiter)
        try:
            woken = await waiter
        finally:
            if timer is not None:
                timer.cancel()
            if waiter in self._waiters:
                self._waiters.remove(waiter)
        return self.frames[seq:] if woken else []

    async def follow(
        self, after: int = 0, heartbeat: float | None = None
    ) -> AsyncIterator[list[Frame] | None]:
        """Every frame above ``after`` until the run ends, in batches (the frames pushed while the reader
        waited: a streamed response writes each batch at once); ``None`` when ``heartbeat`` seconds pass
        idle."""
        seq = after
        while True:
            frames = await self.wait_after(seq, heartbeat)
            if not frames:
                if self.done:
                    return
                yield None
                continue
            seq = frames[-1].seq
            yield frames
            if self.done and seq >= len(self.frames):
                return

    async def wait_done(self) -> Any:
        while not self.done:
            await self.wait_after(len(self.frames), None)
        return self.outcome


def _expire(waiter: asyncio.Future[bool]) -> None:
    if not waiter.done():
        waiter.set_result(False)


KEEP_FINISHED_RUNS = 1000


class RunRegistry:
    """In-process registry of chat runs by (team, app, chat); finished runs are kept ``keep_s`` seconds
    for a client that resumes, while the registry holds at most ``keep_finished`` runs (the oldest
    finished go first; running ones always stay): a finished run holds its frames and outcome, ~30 KB
    for a short chat, and a server answering hundreds of chats a second would otherwise hold every one
    of the last ten minutes' (gigabytes)."""

    def __init__(self, keep_s: float = 600.0, keep_finished: int = KEEP_FINISHED_RUNS) -> None:
        self.keep_s = keep_s
        self.keep_finished = keep_finished
        self._channels: dict[ChatKey, RunChannel] = {}

    def open(self, key: ChatKey, response_chat_item_id: str) -> RunChannel:
        return self.add(RunChannel(key, response_chat_item_id))

    def add(self, channel: RunChannel) -> RunChannel:
        """Register ``channel`` (frames already pushed to it stay): the chat's latest run from now on."""
        self._expire()
        self._channels.pop(channel.key, None)  # re-inserted last: the dict stays in opening order
        self._channels[channel.key] = channel
        return channel

    def get(self, key: ChatKey) -> RunChannel | None:
        self._expire()
        return self._channels.get(key)

    def running(self, key: ChatKey) -> bool:
        channel = self._channels.get(key)
        return channel is not None and not channel.done

    def stop(self, key: ChatKey) -> bool:
        """Signal the chat's running run to stop; False when none is running."""
        channel = self._channels.get(key)
        if channel is None or channel.done:
            return False
        channel.stop.set()
        return True

    def _expire(self) -> None:
        """Drop finished runs older than ``keep_s`` or beyond ``keep_finished``, oldest opened first,
        so a request pays only for what it removes: a run still going is moved behind the others (at
        most a few per call), the first finished one that is recent and within the count ends the
        sweep."""
        now = time.monotonic()
        passes = 8
        while self._channels and passes > 0:
            key, channel = next(iter(self._channels.items()))
            if channel.finished_at is None:
                del self._channels[key]
                self._channels[key] = channel
                passes -= 1
                continue
            if now - channel.finished_at <= self.keep_s and len(self._channels) <= self.keep_finished:
                return
            del self._channels[key]
