"""Helpers of the chat API tests: a live Fathom server next to a scripted model server, an SSE parser."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import uvicorn

from fathom.config import Settings
from fathom.platform import Bootstrap, Platform
from fathom.server.app import create_app
from fathom.testing import ScriptedOpenAIServer
from migrated_databases import sqlite_migrated_ahead
from run_apart import run_apart

MODEL = "scripted-chat"


@dataclass
class ChatServer:
    base_url: str
    platform: Platform
    boot: Bootstrap
    admin_key: str
    model: ScriptedOpenAIServer | None
    app: Any

    def client(self, key: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key or self.admin_key}"}
        return httpx.Client(base_url=self.base_url, headers=headers, timeout=20)

    def run(self, coro_factory: Any) -> Any:
        """Run ``coro_factory(platform)`` on a fresh platform (own database connections)."""
        platform = Platform.build(self.platform.settings)

        async def go() -> Any:
            try:
                return await coro_factory(platform)
            finally:
                await platform.db.close()

        return run_apart(go())

    def create_app(self, body: dict[str, Any], *, publish: bool = True, key: str | None = None) -> str:
        """Create through ``/api/core/app/create`` (which publishes the first version, as FastGPT's does).
        ``publish=False``: an app that was never published (only apps stored before create published, or
        written by other tools, are in that state), stored through the repository."""
        if not publish:
            return self._create_unpublished(body)
        with self.client(key) as client:
            reply = client.post("/api/core/app/create", json=body).json()
            assert reply["code"] == 200, reply
            return str(reply["data"])

    def _create_unpublished(self, body: dict[str, Any]) -> str:
        from fathom.chat.apps import make_draft

        async def make(platform: Platform) -> str:
            kind = str(body.get("type") or "simple")
            app = await platform.apps.create_app(
                self.boot.team_id, str(body["name"]), type=kind, intro="", draft=make_draft(kind, body)
            )
            await platform.chat.owners.set_owner(app.id, self.boot.member_id)
            return app.id

        return str(self.run(make))

    def app_key(self, app_id: str) -> str:
        async def make(platform: Platform) -> str:
            _, plain = await platform.api_keys.create_key(
                self.boot.team_id, self.boot.member_id, name="app", app_id=app_id
            )
            return plain

        return str(self.run(make))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_chat_server(
    settings: Settings,
    model: ScriptedOpenAIServer | None,
    *,
    admin_key: str | None = None,
    run_workers: bool = False,
) -> Iterator[ChatServer]:
    """Serve ``settings`` in a thread; ``admin_key``: a replica of a database already prepared."""
    sqlite_migrated_ahead(settings)
    platform = Platform.build(settings)

    async def prepare() -> Bootstrap:
        try:
            return await platform.prepare()
        finally:
            await platform.db.close()

    boot = run_apart(prepare())  # this thread may run a loop (a console test's Chromium)
    admin_key = admin_key or boot.admin_key
    assert admin_key is not None
    app = create_app(platform, run_workers=run_workers)
    app.state.sse_heartbeat_s = 10.0
    config = uvicorn.Config(app, host="127.0.0.1", port=settings.port, log_level="warning", log_config=None)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("test server did not start")
        time.sleep(0.02)
    try:
        yield ChatServer(f"http://127.0.0.1:{settings.port}", platform, boot, admin_key, model, app)
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def simple_app_body(name: str = "Helper", **config: Any) -> dict[str, Any]:
    return {
        "name": name,
        "type": "simple",
        "simpleConfig": {"model": MODEL, "systemPrompt": "Be brief.", "history": 6, **config},
    }


def echo_app_body(name: str = "Echo") -> dict[str, Any]:
    """An advanced app without a model: workflowStart → answerNode replying ``You said: <question>``."""

    def io(key: str, value: Any) -> dict[str, Any]:
        return {"key": key, "value": value, "valueType": "any", "renderTypeList": ["input"], "label": key}

    start = {
        "nodeId": "start",
        "name": "start",
        "flowNodeType": "workflowStart",
        "inputs": [io("userChatInput", "")],
        "outputs": [{"id": "userChatInput", "key": "userChatInput", "type": "static", "valueType": "string"}],
    }
    reply = {
        "nodeId": "reply",
        "name": "reply",
        "flowNodeType": "answerNode",
        "inputs": [io("text", "You said: {{$start.userChatInput$}}")],
        "outputs": [],
    }
    edge = {"source": "start", "target": "reply", "sourceHandle": "start-source-right"}
    return {
        "name": name,
        "type": "advanced",
        "nodes": [start, reply],
        "edges": [{**edge, "targetHandle": "reply-target-left"}],
    }


@dataclass
class SseFrame:
    id: int | None
    event: str | None
    data: str

    def json(self) -> Any:
        return json.loads(self.data)


def parse_sse(text: str) -> list[SseFrame]:
    """Frames of an SSE body, strictly: every frame ends with a blank line."""
    assert text.endswith("\n\n"), text[-200:]
    frames = []
    for block in text.split("\n\n")[:-1]:
        fields: dict[str, str] = {}
        for line in block.split("\n"):
            name, _, value = line.partition(": ")
            assert name in ("id", "event", "data"), line
            fields[name] = value
        frames.append(
            SseFrame(int(fields["id"]) if "id" in fields else None, fields.get("event"), fields["data"])
        )
    return frames


def answer_text(frames: list[SseFrame]) -> str:
    text = []
    for frame in frames:
        if frame.event in (None, "answer", "fastAnswer") and frame.data != "[DONE]":
            payload = frame.json()
            if "choices" in payload:
                text.append(payload["choices"][0]["delta"].get("content") or "")
    return "".join(text)
