"""Two server replicas sharing one database and one Redis (``FATHOM_REDIS_URL``): a run on replica A
is stopped through replica B, and a client that dropped A's stream resumes on B from Redis."""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from chat_support import (
    MODEL,
    ChatServer,
    answer_text,
    free_port,
    parse_sse,
    simple_app_body,
    start_chat_server,
)

from fathom.config import Settings
from fathom.testing import ScriptedOpenAIServer, text_turn


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    port = free_port()
    workdir = tmp_path_factory.mktemp("redis")
    process = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(workdir),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "redis-server did not start"
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def replicas(
    tmp_path_factory: pytest.TempPathFactory, redis_url: str, scripted: ScriptedOpenAIServer
) -> Iterator[tuple[ChatServer, ChatServer]]:
    data = Path(tmp_path_factory.mktemp("replicas")) / "data"

    def settings() -> Settings:
        return Settings(
            data_dir=data,
            port=free_port(),
            workers=0,
            openai_base_url=scripted.base_url,
            chat_model=MODEL,
            redis_url=redis_url,
        )

    first = start_chat_server(settings(), scripted)
    a = next(first)
    second = start_chat_server(settings(), scripted, admin_key=a.admin_key)
    b = next(second)
    try:
        yield a, b
    finally:
        for server in (second, first):
            server.close()


def test_stop_through_another_replica(
    replicas: tuple[ChatServer, ChatServer], scripted: ScriptedOpenAIServer
) -> None:
    a, b = replicas
    app = a.create_app(simple_app_body("Replicated"))
    scripted.set_script([text_turn("y" * 400, text_chunk_chars=2, delay=0.02)])
    body = {
        "appId": app,
        "chatId": "r-stop",
        "stream": True,
        "detail": True,
        "messages": [{"role": "user", "content": "go"}],
    }
    result: dict[str, Any] = {}

    def consume() -> None:
        with a.client() as client:
            result["frames"] = parse_sse(client.post("/api/v2/chat/completions", json=body).text)

    reader = threading.Thread(target=consume)
    reader.start()
    stopped = False
    with b.client() as client:
        deadline = time.monotonic() + 10
        while not stopped and time.monotonic() < deadline:
            stopped = client.post("/api/v2/chat/stop", json={"appId": app, "chatId": "r-stop"}).json()[
                "data"
            ]["success"]
            time.sleep(0.05)
    reader.join(timeout=20)
    assert stopped
    frames = result["frames"]
    assert frames[-1].data == "[DONE]" and len(answer_text(frames)) < 400


def test_resume_on_another_replica_from_the_redis_mirror(
    replicas: tuple[ChatServer, ChatServer], scripted: ScriptedOpenAIServer
) -> None:
    a, b = replicas
    app = a.create_app(simple_app_body("Mirrored"))
    full = "Streams survive a replica switch."
    scripted.set_script([text_turn(full, text_chunk_chars=3, delay=0.02)])
    body = {
        "appId": app,
        "chatId": "r-resume",
        "stream": True,
        "detail": True,
        "messages": [{"role": "user", "content": "go"}],
    }
    got: list[str] = []
    with a.client() as client, client.stream("POST", "/api/v2/chat/completions", json=body) as response:
        buffer = ""
        for chunk in response.iter_text():
            buffer += chunk
            while "\n\n" in buffer:
                frame, buffer = buffer.split("\n\n", 1)
                got.append(frame + "\n\n")
            if len(got) >= 4:
                break
    first = parse_sse("".join(got))
    last = first[-1].id
    assert last is not None
    with b.client() as client:
        rest = client.get(
            "/api/v2/chat/resume",
            params={"appId": app, "chatId": "r-resume"},
            headers={"Last-Event-ID": str(last)},
        )
    frames = parse_sse(rest.text)
    assert frames[0].event == "resumePhase" and frames[-1].event == "resumeCompleted"
    assert answer_text(first) + answer_text(frames) == full
    assert any(f.data == "[DONE]" for f in frames)
    with httpx.Client(base_url=b.base_url, headers={"Authorization": f"Bearer {b.admin_key}"}) as client:
        records = client.post(
            "/api/core/chat/getPaginationRecords", json={"appId": app, "chatId": "r-resume"}
        ).json()
    assert [r["obj"] for r in records["data"]["list"]] == ["Human", "AI"]  # stored once, by replica A
