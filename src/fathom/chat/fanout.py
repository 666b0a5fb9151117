"""Cross-replica chat runs over Redis (``FATHOM_REDIS_URL``): stop signals by pub/sub, and every run's
frames mirrored to a Redis stream so a client can resume on any replica.

Keys: ``fathom:chat:running:<team>:<app>:<chat>`` (exists while a run is live: a short TTL its replica
refreshes every ``refresh_s``, so a dead replica's key goes within ``running_ttl_s``),
``fathom:chat:stop:<…>`` (a stop asked for that run: read by the run's mirror too, so a stop published
while its replica's subscriber was reconnecting still lands), ``fathom:chat:frames:<…>`` (stream; entry id
``<seq>-1``, fields ``e`` event, ``d`` JSON data; an ``__end__`` entry closes it; kept ``keep_s``
seconds), channel ``fathom:chat:stop``.

Redis may go away at any moment (a restart, a network blip): the subscriber subscribes again with
backoff, a run's mirror keeps its frames and writes them all again once Redis answers (a restarted Redis
has lost them), and no error of Redis fails a chat or escapes as an unretrieved task exception.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from fathom import json_text
from fathom.chat.channel import ChatKey, Frame, RunChannel

log = logging.getLogger("fathom.chat")

STOP_CHANNEL = "fathom:chat:stop"
END_EVENT = "__end__"
MAX_BACKOFF_S = 2.0
# how long a reader of another replica's frames waits through a Redis outage before giving up
READER_PATIENCE_S = 30.0
# how often a reader of another replica's idle run looks whether that replica still runs it
LIVENESS_CHECK_S = 2.0
# how long ``aclose`` lets mirrors finish their last writes
CLOSE_GRACE_S = 5.0


def _suffix(key: ChatKey) -> str:
    return ":".join(key)


def _backoff(failures: int) -> float:
    return float(min(MAX_BACKOFF_S, 0.1 * 2 ** max(0, failures - 1)))


def _reason(exc: BaseException) -> str:
    """An error's kind without its text (Redis's messages carry the host and port)."""
    return type(exc).__name__


class RemoteChannel:
    """A run of another replica, read from its Redis frame stream (the reader side of a RunChannel).
    ``interrupted`` is set when the stream ends without its end marker because the run's replica went
    away (its ``running`` key expired): the frames stop there for good."""

    def __init__(self, client: Any, stream: str, detail: bool, running_key: str = "") -> None:
        self.client = client
        self.stream = stream
        self.running_key = running_key
        self.detail = detail
        self.frames: list[Frame] = []
        self.done = False
        self.interrupted = False

    async def _replica_gone(self) -> bool:
        """Whether the run's replica stopped keeping its ``running`` key (it died, or lost Redis for
        longer than the key lives)."""
        return bool(self.running_key) and not await self.client.exists(self.running_key)

    def _take(self, entries: list[Any]) -> list[Frame]:
        taken = []
        for entry_id, fields in entries:
            seq = int(str(entry_id).split("-", 1)[0])
            event = fields.get("e", "")
            if event == END_EVENT:
                self.done = True
                continue
            frame = Frame(seq, event, json_text.loads(fields.get("d", "null")))
            while len(self.frames) < seq - 1:  # frames before ``after`` are unknown here
                self.frames.append(Frame(len(self.frames) + 1, "", None))
            self.frames.append(frame)
            taken.append(frame)
        return taken

    async def follow(
        self, after: int = 0, heartbeat: float | None = None
    ) -> AsyncIterator[list[Frame] | None]:
        """Frames above ``after`` until the end marker; ``None`` every ``heartbeat`` seconds idle. Idle, it
        looks every ``LIVENESS_CHECK_S`` whether the run's replica still keeps it running, and ends with
        ``interrupted`` set once it does not. Through a Redis outage it keeps the client with heartbeats
        and reads on once Redis is back (up to ``READER_PATIENCE_S``; then the error is raised rather
        than the stream claimed complete)."""
        last = f"{after}-1"
        quiet = heartbeat or 10.0
        block = int(min(quiet, LIVENESS_CHECK_S) * 1000)
        idle_since = time.monotonic()
        caught_up = False
        failures = 0
        failing_since: float | None = None
        while not self.done:
            try:
                if caught_up:
                    reply = await self.client.xread({self.stream: last}, block=block, count=100)
                    entries = reply[0][1] if reply else []
                else:
                    entries = await self.client.xrange(self.stream, min=f"({last}")
                if not entries and await self._replica_gone():
                    # the last frames and the end marker may have landed just before the key went
                    entries = await self.client.xrange(self.stream, min=f"({last}")
                    if not entries:
                        self.interrupted = True
                        return
            except Exception as exc:
                failures += 1
                now = time.monotonic()
                failing_since = failing_since or now
                if now - failing_since > READER_PATIENCE_S:
                    raise
                log.debug("reading a run's frames from Redis failed (%s); retrying", _reason(exc))
                yield None
                await asyncio.sleep(_backoff(failures))
                continue
            failures, failing_since = 0, None
            if not entries:
                if caught_up and time.monotonic() - idle_since >= quiet:
                    idle_since = time.monotonic()
                    yield None
                caught_up = True
                continue
            caught_up = True
            last = str(entries[-1][0])
            frames = self._take(entries)
            if frames:
                idle_since = time.monotonic()
                yield frames


class _Mirror:
    """Copies one run's frames to its Redis stream, in order, in batches (one pipeline each), and keeps
    the run's ``running`` key alive; after any Redis error, writes the whole run again once Redis
    answers. Ends after the end marker is written (or, with Redis gone, ``running_ttl_s`` after the run
    ended: by then the key has expired on its own)."""

    def __init__(self, fanout: RedisFanout, channel: RunChannel) -> None:
        self.fanout = fanout
        self.channel = channel
        suffix = _suffix(channel.key)
        self.stream = f"fathom:chat:frames:{suffix}"
        self.running = f"fathom:chat:running:{suffix}"
        self.stop_key = f"fathom:chat:stop:{suffix}"
        self.wake = asyncio.Event()

    def sink(self, frame: Frame | None) -> None:
        self.wake.set()

    async def run(self) -> None:
        client, channel = self.fanout.client, self.channel
        written, rewrite, first, failures = 0, True, True, 0
        while True:
            done, total = channel.done, len(channel.frames)  # frames are only ever appended
            pipe = client.pipeline(transaction=True)
            if first:
                pipe.delete(self.stream, self.stop_key)  # a previous run's frames and stop request
            elif rewrite:
                pipe.delete(self.stream)
            pipe.set(self.running, "1", ex=self.fanout.running_ttl_s, get=True)
            pipe.exists(self.stop_key)
            for frame in channel.frames[0 if rewrite else written : total]:
                data = json_text.dumps(frame.data)
                pipe.xadd(self.stream, {"e": frame.event, "d": data}, id=f"{frame.seq}-1")
            if done:
                pipe.xadd(self.stream, {"e": END_EVENT, "d": "null"}, id=f"{total + 1}-1")
                pipe.expire(self.stream, int(self.fanout.keep_s))
                pipe.delete(self.running, self.stop_key)
            try:
                results = await pipe.execute()
            except Exception as exc:
                failures += 1
                if failures == 1:
                    log.warning("mirroring chat run to Redis failed (%s); retrying", _reason(exc))
                rewrite = True  # what Redis kept is unknown now
                ended = channel.finished_at
                if ended is not None and time.monotonic() - ended > self.fanout.running_ttl_s:
                    log.warning("gave up mirroring a finished chat run: Redis did not come back")
                    return
                await asyncio.sleep(_backoff(failures))
                continue
            offset = 1 if first or rewrite else 0
            previous, stop_asked = results[offset], results[offset + 1]
            if failures:
                log.info("mirroring chat runs to Redis again after %d failed write(s)", failures)
                failures = 0
            if previous is None and not first and not rewrite:
                rewrite = True  # the run's key vanished: Redis restarted and lost the stream too
                continue
            first = rewrite = False
            written = total
            if stop_asked and not done:
                channel.stop.set()
            if done:
                return
            self.wake.clear()
            if len(channel.frames) == written and not channel.done:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.wake.wait(), self.fanout.refresh_s)


class RedisFanout:
    """Stop signals and frame mirrors shared by every replica through one Redis."""

    def __init__(
        self, url: str, *, keep_s: float = 600.0, running_ttl_s: int = 30, refresh_s: float = 2.0
    ) -> None:
        try:
            import redis.asyncio as redis_asyncio
            from redis.asyncio.retry import Retry
            from redis.backoff import ExponentialBackoff
        except ImportError as exc:  # pragma: no cover - depends on the installation
            raise RuntimeError("FATHOM_REDIS_URL is set but the 'redis' package is not installed") from exc
        # a Redis that is down fails a call within about a second (redis-py's default retries take ~7 s),
        # so a stop or resume request answers promptly and the loops below do the waiting
        self.client = redis_asyncio.from_url(
            url,
            decode_responses=True,
            socket_connect_timeout=5,
            socket_keepalive=True,
            retry=Retry(ExponentialBackoff(cap=0.5, base=0.05), 2),
        )
        self.keep_s = keep_s
        self.running_ttl_s = running_ttl_s
        self.refresh_s = refresh_s
        self.subscribed = False
        self._listener: asyncio.Task[None] | None = None
        self._on_stop: Callable[[ChatKey], bool] | None = None
        self._writers: set[asyncio.Task[None]] = set()

    def listen(self, on_stop: Callable[[ChatKey], bool]) -> None:
        """Start (once, on the running loop) the subscriber that stops local runs on request."""
        self._on_stop = on_stop
        if self._listener is None:
            self._listener = asyncio.get_running_loop().create_task(self._listen())

    async def _listen(self) -> None:
        """Subscribe, and after any disconnect subscribe again (backoff up to ``MAX_BACKOFF_S``)."""
        failures = 0
        while True:
            pubsub = self.client.pubsub()
            try:
                await pubsub.subscribe(STOP_CHANNEL)
                self.subscribed = True
                if failures:
                    log.info("subscribed to chat stop signals again after %d failure(s)", failures)
                    failures = 0
                async for message in pubsub.listen():
                    if message.get("type") != "message" or self._on_stop is None:
                        continue
                    with contextlib.suppress(ValueError, TypeError):
                        team, app, chat = json.loads(message["data"])
                        self._on_stop((team, app, chat))
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                failures += 1
                if failures == 1:
                    log.warning("chat stop signals: Redis connection lost (%s); resubscribing", _reason(exc))
            finally:
                self.subscribed = False
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
            await asyncio.sleep(_backoff(failures))

    async def publish_stop(self, key: ChatKey) -> bool:
        """Ask every replica to stop the chat's run; True when some replica has it running (False too
        when Redis cannot be reached: nothing can be known or asked then)."""
        suffix = _suffix(key)
        try:
            if not await self.client.exists(f"fathom:chat:running:{suffix}"):
                return False
            pipe = self.client.pipeline(transaction=False)
            pipe.set(f"fathom:chat:stop:{suffix}", "1", ex=self.running_ttl_s)
            pipe.publish(STOP_CHANNEL, json.dumps(list(key)))
            await pipe.execute()
        except Exception as exc:
            log.warning("could not ask replicas to stop a chat run: Redis unavailable (%s)", _reason(exc))
            return False
        return True

    def mirror(self, channel: RunChannel) -> Callable[[Frame | None], None]:
        """A sink for the channel's frames (None = the run ended) that copies them to Redis in order."""
        mirror = _Mirror(self, channel)
        task = asyncio.get_running_loop().create_task(mirror.run())
        self._writers.add(task)
        task.add_done_callback(self._writers.discard)
        return mirror.sink

    async def find(self, key: ChatKey, detail: bool) -> RemoteChannel | None:
        """Another replica's mirror of the chat's latest run; None when there is none (or no Redis)."""
        stream = f"fathom:chat:frames:{_suffix(key)}"
        try:
            if not await self.client.exists(stream):
                return None
        except Exception as exc:
            log.warning("could not look for a chat run's frames: Redis unavailable (%s)", _reason(exc))
            return None
        return RemoteChannel(self.client, stream, detail, f"fathom:chat:running:{_suffix(key)}")

    async def status(self) -> str:
        """``ok`` when Redis answers a PING within a second, else ``unavailable`` (no host, no port)."""
        try:
            await asyncio.wait_for(self.client.ping(), timeout=1.0)
        except Exception:
            return "unavailable"
        return "ok"

    async def aclose(self) -> None:
        if self._writers:
            writers = list(self._writers)
            _, pending = await asyncio.wait(writers, timeout=CLOSE_GRACE_S)
            for task in pending:
                task.cancel()
            await asyncio.gather(*writers, return_exceptions=True)
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(BaseException):
                await self._listener
        with contextlib.suppress(Exception):
            await self.client.aclose()


async def check_redis(url: str) -> tuple[bool, str]:
    """``fathom doctor``'s check: whether Redis at ``url`` answers, in words without host or password."""
    fanout = RedisFanout(url)
    try:
        state = await fanout.status()
    finally:
        await fanout.aclose()
    if state == "ok":
        return True, "reachable (stop and resume across replicas work)"
    return False, "unreachable: chats still answer; stop and resume work only on the replica running them"
