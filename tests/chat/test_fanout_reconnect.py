"""The Redis fan-out (``fathom.chat.fanout``) through a Redis that goes away and comes back (a real
redis-server, stopped and started on its port): a run that ends while Redis is down still gets its end
marker written and its ``running`` key removed once Redis returns; a run whose Redis restarted mid-way is
written again whole; the stop subscriber is back within seconds; and no task is left with an unretrieved
exception."""

from __future__ import annotations

import asyncio
import gc
import json
import shutil
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as redis_asyncio

from fathom.chat.channel import ChatKey, RunChannel
from fathom.chat.fanout import END_EVENT, RedisFanout

KEY: ChatKey = ("team", "app", "chat")
STREAM = "fathom:chat:frames:team:app:chat"
RUNNING = "fathom:chat:running:team:app:chat"


class Redis:
    def __init__(self, binary: str, workdir: Path) -> None:
        self.binary, self.workdir = binary, workdir
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = int(sock.getsockname()[1])
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        args = ["--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen(
            [self.binary, *args, "--dir", str(self.workdir)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                assert time.monotonic() < deadline, "redis-server did not start"
                time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[Redis]:
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    server = Redis(binary, tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def fanout(redis_server: Redis) -> AsyncIterator[RedisFanout]:
    unretrieved: list[dict[str, Any]] = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _, context: unretrieved.append(context))
    fanout = RedisFanout(redis_server.url, refresh_s=0.2)
    try:
        yield fanout
    finally:
        await fanout.aclose()
        gc.collect()  # a task that died with an exception nobody read reports it when collected
        await asyncio.sleep(0)
        loop.set_exception_handler(None)
    assert unretrieved == []


async def _eventually(check: Any) -> None:
    deadline = time.monotonic() + 15
    while not await check():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.05)


def _client(redis_server: Redis) -> Any:
    return redis_asyncio.from_url(redis_server.url, decode_responses=True)


async def test_a_run_that_ends_while_redis_is_down_is_closed_once_redis_returns(
    redis_server: Redis, fanout: RedisFanout
) -> None:
    channel = RunChannel(KEY, "item")
    channel.listeners.append(fanout.mirror(channel))
    channel.push("answer", {"text": "one"})
    client = _client(redis_server)
    try:
        await _eventually(lambda: client.exists(RUNNING))
        await client.aclose()
        redis_server.stop()
        channel.push("answer", {"text": "two"})
        channel.close()
        await asyncio.sleep(1.0)  # the mirror fails and keeps retrying
        redis_server.start()
        client = _client(redis_server)

        async def closed() -> bool:
            entries = await client.xrange(STREAM)
            return bool(entries) and entries[-1][1]["e"] == END_EVENT

        await _eventually(closed)
        entries = await client.xrange(STREAM)
        assert [json.loads(fields["d"]) for _, fields in entries[:-1]] == [{"text": "one"}, {"text": "two"}]
        assert not await client.exists(RUNNING)
        assert await client.ttl(STREAM) > 0
    finally:
        await client.aclose()


async def test_after_a_restart_the_subscriber_and_the_running_key_come_back(
    redis_server: Redis, fanout: RedisFanout
) -> None:
    stopped: list[ChatKey] = []
    fanout.listen(lambda key: stopped.append(key) or True)
    channel = RunChannel(KEY, "item")
    channel.listeners.append(fanout.mirror(channel))
    channel.push("answer", {"text": "before"})

    async def subscribed() -> bool:
        return fanout.subscribed

    await _eventually(subscribed)
    redis_server.stop()
    assert await fanout.status() == "unavailable"
    assert await fanout.publish_stop(KEY) is False  # nothing can be asked: says so, raises nothing
    redis_server.start()
    await _eventually(subscribed)
    client = _client(redis_server)
    try:
        await _eventually(lambda: client.exists(RUNNING))  # written again by the live run's mirror
        entries = await client.xrange(STREAM)
        assert [json.loads(fields["d"]) for _, fields in entries] == [{"text": "before"}]
        assert await fanout.publish_stop(KEY) is True
        await _eventually(lambda: asyncio.sleep(0, result=channel.stop.is_set() or KEY in stopped))
    finally:
        await client.aclose()
    channel.close()
