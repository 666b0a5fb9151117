"""Every knowledge-base route tried with a key of another team, a read-only member and an app-scoped key.

Another team's resources must look exactly like resources that do not exist (404, same statusText), a
read-only member may read but not write (403), and a key limited to one app may touch no knowledge base.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from fathom.platform import Platform


@dataclass
class World:
    dataset_id: str
    collection_id: str
    data_id: str
    other_team_key: str
    reader_key: str
    app_key: str


def _make_keys(live_server: Any, dataset_id: str) -> tuple[str, str, str]:
    platform = Platform.build(live_server.platform.settings)

    async def setup() -> tuple[str, str, str]:
        try:
            other = await platform.teams.create_team("Other")
            other_owner = await platform.teams.add_member(other.id, "mallory", "owner")
            _, other_key = await platform.api_keys.create_key(other.id, other_owner.id)
            reader = await platform.teams.add_member(live_server.boot.team_id, "reader", "member")
            await platform.teams.set_permission(reader.id, "dataset", dataset_id, "read")
            _, reader_key = await platform.api_keys.create_key(live_server.boot.team_id, reader.id)
            app = await platform.apps.create_app(live_server.boot.team_id, "Bot")
            _, app_key = await platform.api_keys.create_key(
                live_server.boot.team_id, live_server.boot.member_id, app_id=app.id
            )
            return other_key, reader_key, app_key
        finally:
            await platform.db.close()

    return asyncio.run(setup())


@pytest.fixture(scope="module")
def world(module_live_server: Any) -> World:
    live_server = module_live_server
    with live_server.client(live_server.admin_key) as client:
        dataset_id = client.post("/api/core/dataset/create", json={"name": "Secret KB"}).json()["data"]
        collection_id = client.post(
            "/api/core/dataset/collection/create/text",
            json={"datasetId": dataset_id, "name": "n", "text": "Quarterly numbers are confidential."},
        ).json()["data"]["collectionId"]
        deadline = time.monotonic() + 60
        while True:
            rows = client.post("/api/core/dataset/data/v2/list", json={"collectionId": collection_id}).json()[
                "data"
            ]
            if rows["total"]:
                break
            assert time.monotonic() < deadline
            time.sleep(0.2)
    other, reader, app = _make_keys(live_server, dataset_id)
    return World(dataset_id, collection_id, rows["list"][0]["_id"], other, reader, app)


# (method, path, body or query builder, needs write)
ROUTES: list[tuple[str, str, Any, bool]] = [
    ("GET", "/api/core/dataset/detail", lambda w: {"id": w.dataset_id}, False),
    ("POST", "/api/core/dataset/searchTest", lambda w: {"datasetId": w.dataset_id, "text": "numbers"}, False),
    ("POST", "/api/core/dataset/collection/listV2", lambda w: {"datasetId": w.dataset_id}, False),
    ("GET", "/api/core/dataset/collection/detail", lambda w: {"id": w.collection_id}, False),
    (
        "GET",
        "/api/core/dataset/collection/trainingDetail",
        lambda w: {"collectionId": w.collection_id},
        False,
    ),
    ("POST", "/api/core/dataset/data/v2/list", lambda w: {"collectionId": w.collection_id}, False),
    ("GET", "/api/core/dataset/data/detail", lambda w: {"id": w.data_id}, False),
    (
        "POST",
        "/api/core/dataset/collection/create/text",
        lambda w: {"datasetId": w.dataset_id, "name": "x", "text": "y"},
        True,
    ),
    (
        "POST",
        "/api/core/dataset/collection/create/link",
        lambda w: {"datasetId": w.dataset_id, "link": "https://example.com"},
        True,
    ),
    (
        "POST",
        "/api/core/dataset/data/pushData",
        lambda w: {"collectionId": w.collection_id, "data": [{"q": "x"}]},
        True,
    ),
    ("PUT", "/api/core/dataset/data/update", lambda w: {"dataId": w.data_id, "q": "changed"}, True),
    ("DELETE", "/api/core/dataset/data/delete", lambda w: {"id": w.data_id}, True),
    ("DELETE", "/api/core/dataset/collection/delete", lambda w: {"id": w.collection_id}, True),
    ("DELETE", "/api/core/dataset/delete", lambda w: {"id": w.dataset_id}, True),
]
IDS = [f"{method} {path}" for method, path, _, _ in ROUTES]


def _call(client: httpx.Client, method: str, path: str, values: dict[str, Any]) -> httpx.Response:
    if method in ("GET", "DELETE"):
        return client.request(method, path, params=values)
    return client.request(method, path, json=values)


def _nonexistent(values: dict[str, Any]) -> dict[str, Any]:
    return {k: ("f" * 24 if isinstance(v, str) and len(v) == 24 else v) for k, v in values.items()}


@pytest.mark.parametrize(("method", "path", "build", "writes"), ROUTES, ids=IDS)
def test_another_teams_key_sees_nothing_and_learns_nothing(
    module_live_server: Any, world: World, method: str, path: str, build: Any, writes: bool
) -> None:
    with module_live_server.client(world.other_team_key) as client:
        real = _call(client, method, path, build(world))
        fake = _call(client, method, path, _nonexistent(build(world)))
    assert real.status_code == fake.status_code == 404
    assert real.json()["statusText"] == fake.json()["statusText"] == "unExist"


@pytest.mark.parametrize(("method", "path", "build", "writes"), ROUTES, ids=IDS)
def test_read_only_member_may_read_but_not_write(
    module_live_server: Any, world: World, method: str, path: str, build: Any, writes: bool
) -> None:
    with module_live_server.client(world.reader_key) as client:
        response = _call(client, method, path, build(world))
    if writes:
        assert response.status_code == 403 and response.json()["statusText"] == "unAuth"
    else:
        assert response.status_code == 200, response.text


@pytest.mark.parametrize(("method", "path", "build", "writes"), ROUTES, ids=IDS)
def test_app_scoped_key_may_not_touch_knowledge_bases(
    module_live_server: Any, world: World, method: str, path: str, build: Any, writes: bool
) -> None:
    with module_live_server.client(world.app_key) as client:
        response = _call(client, method, path, build(world))
    assert response.status_code == 403 and response.json()["statusText"] == "unAuth"


def test_list_shows_only_what_the_caller_can_read(module_live_server: Any, world: World) -> None:
    with module_live_server.client(world.other_team_key) as client:
        assert client.post("/api/core/dataset/list", json={}).json()["data"] == []
    with module_live_server.client(world.reader_key) as client:
        assert [d["_id"] for d in client.post("/api/core/dataset/list", json={}).json()["data"]] == [
            world.dataset_id
        ]
    with module_live_server.client(world.app_key) as client:
        assert client.post("/api/core/dataset/list", json={}).status_code == 403
