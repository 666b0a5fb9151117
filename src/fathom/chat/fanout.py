"""Cross-replica chat runs over Redis (``FATHOM_REDIS_URL``): stop signals by pub/sub, and every run's
frames mirrored to a Redis stream so a client can resume on any replica.

Keys: ``fathom:chat:running:<team>:<app>:<chat>`` (exists while a run is live, with a TTL),
``fathom:chat:frames:<team>:<app>:<chat>`` (stream; entry id ``<seq>-1``, fields ``e`` event, ``d`` JSON
data; an ``__end__`` entry closes it; kept ``keep_s`` seconds), channel ``fathom:chat:stop``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

from fathom.chat.channel import ChatKey, Frame, RunChannel

log = logging.getLogger("fathom.chat")

STOP_CHANNEL = "fathom:chat:stop"
END_EVENT = "__end__"


def _suffix(key: ChatKey) -> str:
    return ":".join(key)


class RemoteChannel:
    """A run of another replica, read from its Redis frame stream (the reader side of a RunChannel)."""

    def __init__(self, client: Any, stream: str, detail: bool) -> None:
        self.client = client
        self.stream = stream
        self.detail = detail
        self.frames: list[Frame] = []
        self.done = False

    def _take(self, entries: list[Any]) -> list[Frame]:
        taken = []
        for entry_id, fields in entries:
            seq = int(str(entry_id).split("-", 1)[0])
            event = fields.get("e", "")
            if event == END_EVENT:
                self.done = True
                continue
            frame = Frame(seq, event, json.loads(fields.get("d", "null")))
            while len(self.frames) < seq - 1:  # frames before ``after`` are unknown here
                self.frames.append(Frame(len(self.frames) + 1, "", None))
            self.frames.append(frame)
            taken.append(frame)
        return taken

    async def follow(
        self, after: int = 0, heartbeat: float | None = None
    ) -> AsyncIterator[list[Frame] | None]:
        last = f"{after}-1"
        frames = self._take(await self.client.xrange(self.stream, min=f"({last}"))
        if frames:
            last = f"{frames[-1].seq}-1"
            yield frames
        block = int((heartbeat or 10.0) * 1000)
        while not self.done:
            reply = await self.client.xread({self.stream: last}, block=block, count=100)
            if not reply:
                yield None
                continue
            entries = reply[0][1]
            last = str(entries[-1][0])
            frames = self._take(entries)
            if frames:
                yield frames


class RedisFanout:
    """Stop signals and frame mirrors shared by every replica through one Redis."""

    def __init__(self, url: str, *, keep_s: float = 600.0, running_ttl_s: int = 3600) -> None:
        try:
            import redis.asyncio as redis_asyncio
        except ImportError as exc:  # pragma: no cover - depends on the installation
            raise RuntimeError("FATHOM_REDIS_URL is set but the 'redis' package is not installed") from exc
        self.client = redis_asyncio.from_url(url, decode_responses=True)
        self.keep_s = keep_s
        self.running_ttl_s = running_ttl_s
        self._listener: asyncio.Task[None] | None = None
        self._on_stop: Callable[[ChatKey], bool] | None = None
        self._writers: set[asyncio.Task[None]] = set()

    def listen(self, on_stop: Callable[[ChatKey], bool]) -> None:
        """Start (once, on the running loop) the subscriber that stops local runs on request."""
        self._on_stop = on_stop
        if self._listener is None:
            self._listener = asyncio.get_running_loop().create_task(self._listen())

    async def _listen(self) -> None:
        pubsub = self.client.pubsub()
        await pubsub.subscribe(STOP_CHANNEL)
        try:
            async for message in pubsub.listen():
                if message.get("type") != "message" or self._on_stop is None:
                    continue
                with contextlib.suppress(ValueError, TypeError):
                    team, app, chat = json.loads(message["data"])
                    self._on_stop((team, app, chat))
        finally:
            with contextlib.suppress(Exception):
                await pubsub.aclose()

    async def publish_stop(self, key: ChatKey) -> bool:
        """Ask every replica to stop the chat's run; True when some replica has it running."""
        running = bool(await self.client.exists(f"fathom:chat:running:{_suffix(key)}"))
        if running:
            await self.client.publish(STOP_CHANNEL, json.dumps(list(key)))
        return running

    def mirror(self, channel: RunChannel) -> Callable[[Frame | None], None]:
        """A sink for the channel's frames (None = the run ended) that copies them to Redis in order."""
        queue: asyncio.Queue[Frame | None] = asyncio.Queue()
        suffix = _suffix(channel.key)
        stream, running = f"fathom:chat:frames:{suffix}", f"fathom:chat:running:{suffix}"

        async def write() -> None:
            await self.client.delete(stream)
            await self.client.set(running, "1", ex=self.running_ttl_s)
            while True:
                frame = await queue.get()
                if frame is None:
                    await self.client.xadd(
                        stream, {"e": END_EVENT, "d": "null"}, id=f"{len(channel.frames) + 1}-1"
                    )
                    await self.client.expire(stream, int(self.keep_s))
                    await self.client.delete(running)
                    return
                data = json.dumps(frame.data, ensure_ascii=False)
                await self.client.xadd(stream, {"e": frame.event, "d": data}, id=f"{frame.seq}-1")

        task = asyncio.get_running_loop().create_task(write())
        self._writers.add(task)
        task.add_done_callback(self._writers.discard)
        return queue.put_nowait

    async def find(self, key: ChatKey, detail: bool) -> RemoteChannel | None:
        stream = f"fathom:chat:frames:{_suffix(key)}"
        if not await self.client.exists(stream):
            return None
        return RemoteChannel(self.client, stream, detail)

    async def aclose(self) -> None:
        if self._writers:
            await asyncio.gather(*self._writers, return_exceptions=True)
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(BaseException):
                await self._listener
        with contextlib.suppress(Exception):
            await self.client.aclose()
