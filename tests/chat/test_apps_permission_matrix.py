"""Every app, chat and history route tried with: another team's key (404, as if the app did not
exist), a member with read permission (reads and chats pass, writes 403), a member with no permission (403),
a key limited to another app (403) and a key limited to this app (may chat and read its history)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from chat_support import ChatServer, simple_app_body

from fathom.platform import Platform
from fathom.testing import ScriptedOpenAIServer, text_turn


@dataclass
class World:
    app_id: str
    other_team: str
    reader: str
    stranger: str
    other_app_key: str
    own_app_key: str


@pytest.fixture(scope="module")
def world(chat_server: ChatServer, scripted: ScriptedOpenAIServer) -> World:
    app_id = chat_server.create_app(simple_app_body("Guarded"))
    other_app = chat_server.create_app(simple_app_body("Elsewhere"))
    scripted.set_script(lambda request: text_turn("ok"))
    with chat_server.client() as client:
        body = {"appId": app_id, "chatId": "guarded", "messages": [{"role": "user", "content": "hi"}]}
        assert client.post("/api/v1/chat/completions", json=body).json()["choices"]
    team = chat_server.boot.team_id

    async def setup(platform: Platform) -> World:
        other = await platform.teams.create_team("Other")
        owner = await platform.teams.add_member(other.id, "mallory", "owner")
        _, other_key = await platform.api_keys.create_key(other.id, owner.id)
        reader = await platform.teams.add_member(team, "reader", "member")
        await platform.teams.set_permission(reader.id, "app", app_id, "read")
        _, reader_key = await platform.api_keys.create_key(team, reader.id)
        stranger = await platform.teams.add_member(team, "stranger", "member")
        _, stranger_key = await platform.api_keys.create_key(team, stranger.id)
        admin = chat_server.boot.member_id
        _, other_app_key = await platform.api_keys.create_key(team, admin, app_id=other_app)
        _, own_key = await platform.api_keys.create_key(team, admin, app_id=app_id)
        return World(app_id, other_key, reader_key, stranger_key, other_app_key, own_key)

    world: World = chat_server.run(setup)
    return world


Body = Callable[[World], dict[str, Any]]
READ, WRITE, MANAGE = "read", "write", "manage"
CHAT = {"chatId": "guarded"}
ROUTES: list[tuple[str, str, Body, str]] = [
    ("GET", "/api/core/app/detail", lambda w: {"appId": w.app_id}, READ),
    ("POST", "/api/core/app/version/list", lambda w: {"appId": w.app_id}, READ),
    ("GET", "/api/core/app/version/latest", lambda w: {"appId": w.app_id}, READ),
    ("GET", "/api/core/app/exportWorkflow", lambda w: {"appId": w.app_id}, READ),
    (
        "POST",
        "/api/v1/chat/completions",
        lambda w: {"appId": w.app_id, "messages": [{"role": "user", "content": "x"}]},
        READ,
    ),
    ("POST", "/api/core/chat/getHistories", lambda w: {"appId": w.app_id}, READ),
    ("POST", "/api/core/chat/getPaginationRecords", lambda w: {"appId": w.app_id, **CHAT}, READ),
    ("GET", "/api/core/chat/getResData", lambda w: {"appId": w.app_id, **CHAT, "dataId": "none"}, READ),
    ("GET", "/api/core/chat/init", lambda w: {"appId": w.app_id, **CHAT}, READ),
    ("POST", "/api/v2/chat/stop", lambda w: {"appId": w.app_id, **CHAT}, READ),
    ("POST", "/api/core/app/update", lambda w: {"appId": w.app_id, "intro": "changed"}, WRITE),
    ("POST", "/api/core/app/version/publish", lambda w: {"appId": w.app_id}, WRITE),
    (
        "POST",
        "/api/core/chat/chatTest",
        lambda w: {"appId": w.app_id, "messages": [{"role": "user", "content": "x"}], "stream": False},
        WRITE,
    ),
    # renaming and deleting a chat: the app is read, then the chat's owner decides (the reader is not the
    # owner of "guarded"): tests/server/test_chat_ownership_matrix.py
    ("DELETE", "/api/core/app/del", lambda w: {"appId": w.app_id}, MANAGE),
]


def call(chat_server: ChatServer, key: str, method: str, path: str, values: dict[str, Any]) -> Any:
    with chat_server.client(key) as client:
        if method in ("GET", "DELETE"):
            return client.request(method, path, params=values)
        return client.request(method, path, json=values)


@pytest.mark.parametrize(("method", "path", "body", "need"), ROUTES, ids=[r[1] for r in ROUTES])
def test_route_permissions(
    chat_server: ChatServer, world: World, method: str, path: str, body: Body, need: str
) -> None:
    values = body(world)
    other = call(chat_server, world.other_team, method, path, values)
    assert other.status_code == 404 and other.json()["statusText"] == "appUnExist", other.text
    for key in (world.stranger, world.other_app_key):
        refused = call(chat_server, key, method, path, values)
        assert refused.status_code == 403 and refused.json()["statusText"] == "unAuthApp", refused.text
    reader = call(chat_server, world.reader, method, path, values)
    if need == READ:
        assert reader.status_code == 200, reader.text
    else:
        assert reader.status_code == 403 and reader.json()["statusText"] == "unAuthApp", reader.text


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/chat/completions",
        "/api/core/chat/getHistories",
        "/api/core/chat/getPaginationRecords",
        "/api/core/chat/updateHistory",
    ],
)
def test_a_key_made_for_the_app_may_chat_and_manage_its_history(
    chat_server: ChatServer, world: World, path: str
) -> None:
    """... its own chats: the key's, not those of the member who made it (issue 28)."""
    values = {"appId": world.app_id, "chatId": "the-keys-own", "messages": [{"role": "user", "content": "x"}]}
    started = call(chat_server, world.own_app_key, "POST", "/api/v1/chat/completions", values)
    assert started.status_code == 200, started.text
    response = call(chat_server, world.own_app_key, "POST", path, values)
    assert response.status_code == 200, response.text


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/core/app/create", {"name": "x"}),
        ("/api/core/app/importWorkflow", {"name": "x", "nodes": [], "edges": []}),
        ("/api/core/app/copy", {"appId": "000000000000000000000000"}),
        ("/api/core/app/update", {"appId": "000000000000000000000000"}),
    ],
)
def test_app_scoped_keys_cannot_create_or_touch_other_apps(
    chat_server: ChatServer, world: World, path: str, body: dict[str, Any]
) -> None:
    response = call(chat_server, world.own_app_key, "POST", path, body)
    assert response.status_code == 403 and response.json()["statusText"] == "unAuthApp", response.text


def test_app_list_of_an_app_scoped_key_shows_only_its_app(chat_server: ChatServer, world: World) -> None:
    listed = call(chat_server, world.own_app_key, "POST", "/api/core/app/list", {}).json()["data"]
    assert [a["_id"] for a in listed] == [world.app_id]
