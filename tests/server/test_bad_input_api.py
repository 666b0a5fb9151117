"""Bad input never reaches a 500, on SQLite and on PostgreSQL: invalid UTF-8, lone surrogates, NUL,
nesting too deep and names over the limit are a 400 in FastGPT's envelope naming the problem, and the
same keep-alive connection serves the next request. A 500 (forced here by a route that fails) closes
its connection cleanly with ``Connection: close``."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from live_support import LiveServer, free_port, start_live_server

from fathom.config import Settings
from fathom.platform import Platform
from fathom.server.app import create_app


def _settings(root: Path, request: pytest.FixtureRequest, backend: str) -> Settings:
    url = None
    if backend == "postgres":
        server = request.getfixturevalue("postgres_server")
        url = server.create_database(f"badinput_{os.getpid()}_{free_port()}")
    extra: dict[str, Any] = {"database_url": url} if url else {}
    return Settings(data_dir=root / "data", port=free_port(), workers=1, **extra)


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from start_live_server(_settings(tmp_path_factory.mktemp(request.param), request, request.param))


@pytest.fixture(scope="module")
def app_id(server: LiveServer) -> str:
    with server.client(server.admin_key) as client:
        return str(client.post("/api/core/app/create", json={"name": "Bot", "type": "simple"}).json()["data"])


@pytest.fixture(scope="module")
def dataset_id(server: LiveServer) -> str:
    with server.client(server.admin_key) as client:
        return str(client.post("/api/core/dataset/create", json={"name": "KB"}).json()["data"])


LONG = "n" * 201
# (path, raw JSON body with {app}/{dataset} filled in, what the message names)
BAD_BODIES: list[tuple[str, bytes, str]] = [
    ("/api/core/dataset/create", b'{"name":"\xff"}', "body: not valid UTF-8 (byte 0xff at position 9)"),
    ("/api/core/app/create", b'{"name":"ok\xc3"}', "body: not valid UTF-8"),
    ("/api/core/dataset/create", b'{"name":"\\u0000\\ud800"}', "body.name: contains a NUL character"),
    ("/api/core/dataset/create", b'{"name":"x\\ud800"}', "body.name: contains a lone surrogate (\\ud800)"),
    ("/api/core/app/create", b'{"name":"a\\u0000b"}', "body.name: contains a NUL character"),
    ("/api/core/dataset/collection/create/text", b'{"datasetId":"{dataset}","name":"t","text":"a\\u0000"}',
     "body.text: contains a NUL character"),
    ("/api/v1/chat/completions", b'{"appId":"{app}","messages":[{"role":"user","content":"\\udfff"}]}',
     "body.messages[0].content: contains a lone surrogate"),
    ("/api/core/chat/updateHistory", b'{"appId":"{app}","chatId":"c","customTitle":"\\u0000"}',
     "body.customTitle: contains a NUL"),
    ("/api/core/dataset/create", b"[" * 200_000, "body: nested deeper than 64 levels"),
    ("/api/core/app/create", b'{"name":"x","chatConfig":' + b'{"a":' * 100 + b"1" + b"}" * 101,
     "body: nested deeper than 64 levels"),
    ("/api/core/dataset/create", b'{"name":"' + LONG.encode() + b'"}', "name: at most 200 characters"),
    ("/api/core/app/create", b'{"name":"' + LONG.encode() + b'","type":"simple"}',
     "name: at most 200 characters"),
    ("/api/core/dataset/create", b'{"name":"' + b"n" * 2_000_000 + b'"}', "name: at most 200 characters"),
    ("/api/core/dataset/create", b'{"name":"ok","agentModel":"' + LONG.encode() + b'"}',
     "agentModel: at most 200"),
    ("/api/core/dataset/create", b'{"name":"x", "parentId": }', "body: not valid JSON"),
]  # fmt: skip


def _fill(raw: bytes, app: str, dataset: str) -> bytes:
    return raw.replace(b"{app}", app.encode()).replace(b"{dataset}", dataset.encode())


@pytest.mark.parametrize(("path", "raw", "named"), BAD_BODIES, ids=[f"{p} {n}" for p, _, n in BAD_BODIES])
def test_bad_input_is_a_400_naming_the_problem_and_the_connection_lives_on(
    server: LiveServer, app_id: str, dataset_id: str, path: str, raw: bytes, named: str
) -> None:
    headers = {"Content-Type": "application/json"}
    with server.client(server.admin_key) as client:
        response = client.post(path, content=_fill(raw, app_id, dataset_id), headers=headers)
        follow_on = client.get("/api/v1/whoami")  # the same keep-alive connection
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["code"] == 507000 and body["statusText"] == "invalidParams" and body["data"] is None, body
    assert named in body["message"], body
    assert response.headers.get("connection", "keep-alive").lower() != "close"
    assert follow_on.status_code == 200 and follow_on.json()["data"]["teamId"]


def test_a_nul_in_the_query_string_is_refused_by_name(server: LiveServer, dataset_id: str) -> None:
    with server.client(server.admin_key) as client:
        response = client.get("/api/core/dataset/detail", params={"id": dataset_id, "x": "a\x00"})
        follow_on = client.get("/api/core/dataset/detail", params={"id": dataset_id})
    assert response.status_code == 400 and "query.x: contains a NUL" in response.json()["message"]
    assert follow_on.status_code == 200


def test_names_at_the_limit_are_stored_and_over_it_refused_everywhere(
    server: LiveServer, app_id: str, dataset_id: str
) -> None:
    """The same limits on both backends: 200 for app and knowledge-base names, 500 for collection
    names and chat titles; a copy of a 200-character app is cut to fit."""
    name = "é" * 200
    with server.client(server.admin_key) as client:
        app = client.post("/api/core/app/create", json={"name": name, "type": "simple"}).json()
        copy = client.post("/api/core/app/copy", json={"appId": app["data"]}).json()
        renamed = client.post("/api/core/app/update", json={"appId": app_id, "name": LONG})
        kb = client.post("/api/core/dataset/create", json={"name": name}).json()
        kb_renamed = client.post("/api/core/dataset/update", json={"id": dataset_id, "name": LONG})
        collection = client.post(
            "/api/core/dataset/collection/create/text",
            json={"datasetId": dataset_id, "name": "c" * 501, "text": "t"},
        )
        link = client.post(
            "/api/core/dataset/collection/create/link",
            json={"datasetId": dataset_id, "link": "https://example.com/" + "p" * 600},
        ).json()
        version = client.post("/api/core/app/version/publish", json={"appId": app_id, "versionName": LONG})
    assert app["code"] == 200 and kb["code"] == 200
    with server.client(server.admin_key) as client:
        detail = client.get("/api/core/app/detail", params={"appId": app["data"]}).json()["data"]
        copied = client.get("/api/core/app/detail", params={"appId": copy["data"]["appId"]}).json()["data"]
        listed = client.post("/api/core/dataset/collection/listV2", json={"datasetId": dataset_id}).json()
    assert detail["name"] == name and len(copied["name"]) == 200 and copied["name"].endswith(" Copy")
    assert link["code"] == 200
    assert any(
        len(item["name"]) == 500 and item["rawLink"].endswith("p" * 600) for item in listed["data"]["list"]
    )
    for refused, field in (
        (renamed, "name"),
        (kb_renamed, "name"),
        (collection, "name"),
        (version, "versionName"),
    ):
        assert refused.status_code == 400 and refused.json()["message"].startswith(f"{field}: at most"), (
            refused.text
        )


def _serve(app: FastAPI, port: int) -> Iterator[str]:
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="critical"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive()
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def test_an_unexpected_500_closes_its_connection_cleanly(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", port=free_port(), workers=1)
    platform = Platform.build(settings)

    async def prepare() -> str:
        try:
            boot = await platform.prepare()
            return str(boot.admin_key)
        finally:
            await platform.db.close()

    key = asyncio.run(prepare())
    app = create_app(platform, run_workers=False)

    @app.get("/api/test/fails")
    async def fails() -> None:
        raise RuntimeError("a bug")  # stands in for any fault a handler might hit

    for base_url in _serve(app, settings.port):
        with httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {key}"}) as client:
            failed = client.get("/api/test/fails")
            follow_on = client.get("/api/v1/whoami")
        assert failed.status_code == 500 and failed.headers["connection"] == "close"
        assert failed.json() == {
            "code": 500,
            "statusText": "",
            "message": "Internal server error",
            "data": None,
        }
        assert follow_on.status_code == 200  # a fresh connection, no reset
