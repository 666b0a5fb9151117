"""Two teams, a knowledge base, an app, an app key and member keys on one live server: the cast of the
permission tests (issue 13). Everything a user can make through the HTTP API is made through it; members
and grants, which have no route, through the repositories."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from live_support import LiveServer, free_port, ok, start_live_server

from fathom.config import Settings
from fathom.platform import Platform
from fathom.testing import ScriptedOpenAIServer, text_turn
from source_servers import TOKEN, Library

MODEL = "scripted-chat"
READER_PASSWORD = "the reader's password"
LOGIN = "/api/support/user/account/loginByPassword"
SECRET_TEXT = "The quarterly numbers are confidential: revenue rose by 41 percent."


@dataclass
class World:
    server: LiveServer
    dataset_id: str
    collection_id: str
    data_id: str
    app_id: str
    version_id: str
    chat_id: str
    answer_id: str  # the dataId of the chat's AI item
    other_team_key: str
    stranger_key: str  # a member of the team with no permission at all
    reader_key: str  # a member who may read the knowledge base and the app
    reader_id: str
    stranger_id: str
    app_key: str  # made with openapi/create {"appId": app_id} by the team's owner
    mcp_set_id: str = ""  # an MCP tool set (never connected) the reader may read
    http_set_id: str = ""  # an empty HTTP tool set the reader may read
    share_link_id: str = ""  # a share link of the app (its ``_id``), made by the owner
    api_dataset_id: str = ""  # an API file library knowledge base (tests/server/source_servers.py)
    api_collection_id: str = ""  # a collection of one of its files, ingested
    tag_id: str = ""  # a tag of the knowledge base, carried by its collection

    def client(self, key: str) -> httpx.Client:
        return self.server.client(key)

    def session(self, username: str, password: str, *, csrf: bool = True) -> httpx.Client:
        """A cookie client signed in by password; it sends the session's CSRF token unless ``csrf``
        is False."""
        client = httpx.Client(base_url=self.server.base_url, timeout=10)
        signed = ok(client.post(LOGIN, json={"username": username, "password": password}))
        if csrf:
            client.headers["X-CSRF-Token"] = signed["csrfToken"]
        return client

    def owner_session(self, *, csrf: bool = True) -> httpx.Client:
        assert self.server.boot.root_password
        return self.session("root", self.server.boot.root_password, csrf=csrf)

    def reader_session(self) -> httpx.Client:
        return self.session("reader", READER_PASSWORD)


def serve(
    root: Path, scripted: ScriptedOpenAIServer, database_url: str | None = None
) -> Iterator[LiveServer]:
    settings = Settings(
        data_dir=root / "data",
        port=free_port(),
        workers=1,
        openai_base_url=scripted.base_url,
        chat_model=MODEL,
        database_url=database_url,
        max_body_bytes=256 * 1024,
        egress_allow_hosts=["localhost"],  # the API file library of build_world (loopback by name only)
    )
    yield from start_live_server(settings)


def run_on(server: LiveServer, work: Any) -> Any:
    """``await work(platform)`` on a platform of its own (its own database connections)."""
    platform = Platform.build(server.platform.settings)

    async def go() -> Any:
        try:
            return await work(platform)
        finally:
            await platform.db.close()

    return asyncio.run(go())


def wait_for_rows(client: httpx.Client, collection_id: str) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 60
    while True:
        rows = ok(client.post("/api/core/dataset/data/v2/list", json={"collectionId": collection_id}))
        if rows["total"]:
            return list(rows["list"])
        assert time.monotonic() < deadline, "ingestion did not finish"
        time.sleep(0.2)


def last_answer_id(client: httpx.Client, app_id: str, chat_id: str) -> str:
    records = ok(
        client.post("/api/core/chat/getPaginationRecords", json={"appId": app_id, "chatId": chat_id})
    )
    return str(records["list"][-1]["dataId"])


def _api_library(client: httpx.Client) -> tuple[str, str]:
    """A knowledge base over a loopback API file library (reached as ``localhost``), and a collection of
    its one file once ingested."""
    Library.files = {"doc-1": {"name": "Policy.md", "parentId": None, "content": SECRET_TEXT}}
    server = ThreadingHTTPServer(("127.0.0.1", 0), Library)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base_url = f"http://localhost:{server.server_address[1]}"
    body = {"name": "Files", "type": "apiDataset", "apiServer": {"baseUrl": base_url, "authorization": TOKEN}}
    dataset_id = str(ok(client.post("/api/core/dataset/create", json=body)))
    made = {"datasetId": dataset_id, "apiFileId": "doc-1", "name": "Policy.md"}
    collection_id = str(
        ok(client.post("/api/core/dataset/collection/create/apiCollection", json=made))["collectionId"]
    )
    wait_for_rows(client, collection_id)
    return dataset_id, collection_id


def build_world(server: LiveServer, scripted: ScriptedOpenAIServer) -> World:
    scripted.set_script(lambda request: text_turn("ok"))
    with server.client(server.admin_key) as client:
        dataset_id = ok(client.post("/api/core/dataset/create", json={"name": "Secret KB"}))
        collection_id = ok(
            client.post(
                "/api/core/dataset/collection/create/text",
                json={"datasetId": dataset_id, "name": "numbers", "text": SECRET_TEXT},
            )
        )["collectionId"]
        data_id = wait_for_rows(client, collection_id)[0]["_id"]
        tag_id = ok(
            client.post("/api/core/dataset/tag/create", json={"datasetId": dataset_id, "tag": "numbers"})
        )
        tag_body = {"datasetId": dataset_id, "tag": tag_id, "collectionIds": [collection_id]}
        ok(client.post("/api/core/dataset/tag/addToCollections", json=tag_body))
        body = {
            "name": "Bot",
            "type": "simple",
            "simpleConfig": {"model": MODEL, "systemPrompt": "Be brief."},
        }
        app_id = ok(client.post("/api/core/app/create", json=body))
        version_id = ok(client.post("/api/core/app/version/list", json={"appId": app_id}))["list"][0]["_id"]
        app_key = ok(
            client.post("/api/support/openapi/create", json={"name": "website bot", "appId": app_id})
        )
        mcp_body = {"name": "Team MCP", "url": "http://127.0.0.1:9/mcp", "toolList": [{"name": "lookup"}]}
        mcp_set_id = ok(client.post("/api/core/app/mcpTools/create", json=mcp_body))
        http_set_id = ok(client.post("/api/core/app/httpTools/create", json={"name": "Team API"}))
        ok(client.post("/api/support/outLink/create", json={"appId": app_id, "name": "Website"}))
        share_link_id = ok(client.get("/api/support/outLink/list", params={"appId": app_id}))[0]["_id"]
        api_dataset_id, api_collection_id = _api_library(client)
    chat_id = "guarded-chat"
    with server.client(app_key) as client:
        reply = client.post(
            "/api/v1/chat/completions",
            json={"chatId": chat_id, "messages": [{"role": "user", "content": "hello"}]},
        )
        assert reply.status_code == 200, reply.text
        answer_id = last_answer_id(client, app_id, chat_id)
    team = server.boot.team_id

    async def members(platform: Platform) -> tuple[str, str, str, str, str]:
        other = await platform.teams.create_team("Other")
        mallory = await platform.teams.add_member(other.id, "mallory", "owner")
        _, other_key = await platform.api_keys.create_key(other.id, mallory.id)
        stranger = await platform.teams.add_member(team, "stranger", "member")
        _, stranger_key = await platform.api_keys.create_key(team, stranger.id)
        reader = await platform.teams.add_member(team, "reader", "member")
        await platform.teams.set_permission(reader.id, "dataset", dataset_id, "read")
        await platform.teams.set_permission(reader.id, "dataset", api_dataset_id, "read")
        await platform.teams.set_permission(reader.id, "app", app_id, "read")
        for tool_set in (mcp_set_id, http_set_id):
            await platform.teams.set_permission(reader.id, "app", tool_set, "read")
        _, reader_key = await platform.api_keys.create_key(team, reader.id)
        # the reader also signs in to the console with a password (members have no creation route
        # but invitations; the invitation path is tested in test_accounts_api)
        hashed = await platform.accounts.hash_password(READER_PASSWORD)
        await platform.accounts.store.create_user(reader.id, "reader", hashed)
        return other_key, stranger_key, reader_key, reader.id, stranger.id

    other_key, stranger_key, reader_key, reader_id, stranger_id = run_on(server, members)
    return World(
        server,
        dataset_id,
        collection_id,
        data_id,
        app_id,
        version_id,
        chat_id,
        answer_id,
        other_key,
        stranger_key,
        reader_key,
        reader_id,
        stranger_id,
        str(app_key),
        str(mcp_set_id),
        str(http_set_id),
        str(share_link_id),
        api_dataset_id,
        api_collection_id,
        str(tag_id),
    )


@pytest.fixture(scope="module")
def scripted() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as server:
        yield server
