"""A real Fathom server on a loopback port, in a background thread (imported by conftest and by tests that
need a server with their own settings)."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import uvicorn

from fathom.config import Settings
from fathom.platform import Bootstrap, Platform
from fathom.server.app import create_app


@dataclass
class LiveServer:
    base_url: str
    platform: Platform
    boot: Bootstrap
    admin_key: str

    def client(self, key: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.base_url, headers=headers, timeout=10)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_live_server(settings: Settings) -> Iterator[LiveServer]:
    platform = Platform.build(settings)

    async def prepare() -> Bootstrap:
        try:
            return await platform.prepare()
        finally:
            await platform.db.close()

    boot = asyncio.run(prepare())
    assert boot.admin_key is not None
    config = uvicorn.Config(
        create_app(platform), host="127.0.0.1", port=settings.port, log_level="warning", log_config=None
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("test server did not start")
        time.sleep(0.02)
    try:
        yield LiveServer(f"http://127.0.0.1:{settings.port}", platform, boot, boot.admin_key)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
