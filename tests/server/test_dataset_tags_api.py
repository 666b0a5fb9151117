"""Collection tags and ``collectionFilterMatch`` through FastGPT's HTTP API, on SQLite and PostgreSQL:
the tag routes (create, list, getAllTags, update, delete, tagUsage, addToCollections; also under
``/api/proApi``), tag names on collection create/update/listV2/detail, ``filterTags`` in listV2, and
searches filtered by tags and createTime in ``searchTest`` and in a workflow's knowledge-search node."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from live_support import LiveServer, backend_database_url, free_port, ok, start_live_server

from fathom.config import Settings
from fathom.testing import ScriptedOpenAIServer, text_turn

OBJECT_ID = re.compile(r"^[0-9a-f]{24}$")
KB = "/api/core/dataset"
TAG = f"{KB}/tag"
TEXTS = {
    "refunds": "Refunds are paid back to the original card within five working days.",
    "shipping": "Parcels ship from Rotterdam and arrive within three days in the EU.",
    "warranty": "Every device carries a two year warranty against manufacturing faults.",
}


@dataclass
class World:
    server: LiveServer
    client: httpx.Client
    dataset_id: str
    collections: dict[str, str]  # name → id


def wait_trained(client: httpx.Client, dataset_id: str) -> None:
    deadline = time.monotonic() + 60
    while True:
        page = ok(client.post(f"{KB}/collection/listV2", json={"datasetId": dataset_id, "pageSize": 30}))
        if all(item["trainingAmount"] == 0 for item in page["list"]):
            return
        assert time.monotonic() < deadline, page
        time.sleep(0.1)


@pytest.fixture(scope="module")
def scripted() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as server:
        server.set_script(lambda request: text_turn("ok"))
        yield server


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, scripted: ScriptedOpenAIServer
) -> Iterator[World]:
    database_url = backend_database_url(request, "tags")
    root = tmp_path_factory.mktemp(request.param)
    settings = Settings(
        data_dir=root / "data",
        port=free_port(),
        workers=1,
        openai_base_url=scripted.base_url,
        chat_model="scripted-chat",
        database_url=database_url,
    )
    for server in start_live_server(settings):
        with server.client(server.admin_key) as client:
            dataset_id = str(ok(client.post(f"{KB}/create", json={"name": "Tagged"})))
            tags = {"refunds": ["money", "policy"], "shipping": ["policy"], "warranty": []}
            times = {"refunds": "2024-01-10T00:00:00.000Z", "shipping": "2024-06-01T00:00:00.000Z"}
            collections = {}
            for name, text in TEXTS.items():
                body = {
                    "datasetId": dataset_id,
                    "name": name,
                    "text": text,
                    "trainingType": "chunk",
                    "chunkSettingMode": "auto",
                    "tags": tags[name],
                    **({"createTime": times[name]} if name in times else {}),
                }
                collections[name] = ok(client.post(f"{KB}/collection/create/text", json=body))["collectionId"]
            wait_trained(client, dataset_id)
            yield World(server, client, dataset_id, collections)


def refused(response: httpx.Response, status: int, status_text: str) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["statusText"] == status_text and body["data"] is None, body
    return str(body["message"])


def all_tags(world: World) -> dict[str, str]:
    listed = ok(world.client.get(f"{TAG}/getAllTags", params={"datasetId": world.dataset_id}))["list"]
    return {item["tag"]: item["_id"] for item in listed}


def tags_of(world: World, name: str) -> list[str]:
    return list(
        ok(world.client.get(f"{KB}/collection/detail", params={"id": world.collections[name]}))["tags"]
    )


def test_tags_named_on_create_become_the_knowledge_bases_tags(world: World) -> None:
    tags = all_tags(world)
    assert {"money", "policy"} <= set(tags) and all(OBJECT_ID.match(i) for i in tags.values())
    assert tags_of(world, "refunds") == ["money", "policy"]
    page = ok(world.client.post(f"{KB}/collection/listV2", json={"datasetId": world.dataset_id}))
    assert {item["name"]: item["tags"] for item in page["list"]}["shipping"] == ["policy"]


def test_create_list_update_and_delete_a_tag(world: World) -> None:
    client, dataset_id = world.client, world.dataset_id
    tag_id = ok(client.post(f"{TAG}/create", json={"datasetId": dataset_id, "tag": "draft"}))
    assert OBJECT_ID.match(tag_id)
    assert refused(client.post(f"{TAG}/create", json={"datasetId": dataset_id, "tag": "draft"}), 409, "") == (
        "Tag already exists"
    )
    page = ok(
        client.post(
            f"{TAG}/list", json={"datasetId": dataset_id, "searchText": "DRA", "current": 1, "pageSize": 10}
        )
    )
    assert page == {
        "list": [
            {"_id": tag_id, "tag": "draft", "teamId": page["list"][0]["teamId"], "datasetId": dataset_id}
        ],
        "total": 1,
    }
    body = {"datasetId": dataset_id, "tag": tag_id, "collectionIds": [world.collections["warranty"]]}
    ok(client.post(f"{TAG}/addToCollections", json=body))
    assert tags_of(world, "warranty") == ["draft"]
    usage = ok(client.get(f"{TAG}/tagUsage", params={"datasetId": dataset_id}))
    assert {"tagId": tag_id, "usage": 1, "collections": [world.collections["warranty"]]} in usage
    ok(client.post(f"{TAG}/update", json={"datasetId": dataset_id, "tagId": tag_id, "tag": "final"}))
    assert tags_of(world, "warranty") == ["final"]
    ok(client.delete("/api/proApi/core/dataset/tag/delete", params={"id": tag_id, "datasetId": dataset_id}))
    assert tags_of(world, "warranty") == [] and "final" not in all_tags(world)
    assert refused(
        client.delete(f"{TAG}/delete", params={"id": tag_id, "datasetId": dataset_id}), 404, ""
    ) == ("Tag not found")
    missing = refused(client.post(f"{TAG}/create", json={"datasetId": dataset_id}), 400, "missingParams")
    assert missing.startswith("tag")


def test_add_to_collections_takes_the_tag_off_the_origin_ones(world: World) -> None:
    client, dataset_id = world.client, world.dataset_id
    refunds, shipping = world.collections["refunds"], world.collections["shipping"]
    body = {"datasetId": dataset_id, "tag": "moved", "collectionIds": [refunds, shipping]}
    ok(client.post(f"{TAG}/addToCollections", json=body))
    body = {**body, "collectionIds": [shipping], "originCollectionIds": [refunds, shipping]}
    ok(client.post(f"{TAG}/addToCollections", json=body))
    assert "moved" not in tags_of(world, "refunds") and "moved" in tags_of(world, "shipping")
    ok(client.put(f"{KB}/collection/update", json={"id": shipping, "tags": ["policy"]}))


def test_list_v2_filters_by_tag_ids(world: World) -> None:
    money = all_tags(world)["money"]
    page = ok(
        world.client.post(
            f"{KB}/collection/listV2", json={"datasetId": world.dataset_id, "filterTags": [money]}
        )
    )
    assert [item["_id"] for item in page["list"]] == [world.collections["refunds"]]


def searched(world: World, match: Any) -> set[str]:
    body = {
        "datasetId": world.dataset_id,
        "text": "card days warranty parcels",
        "limit": 5000,
        "collectionFilterMatch": match,
    }
    hits = ok(world.client.post(f"{KB}/searchTest", json=body))["list"]
    ids = {hit["collectionId"] for hit in hits}
    return {name for name, cid in world.collections.items() if cid in ids}


@pytest.mark.parametrize(
    ("match", "expected"),
    [
        (None, {"refunds", "shipping", "warranty"}),
        ({"tags": {"$and": ["policy"]}}, {"refunds", "shipping"}),
        ({"tags": {"$and": ["policy", "money"]}}, {"refunds"}),
        ({"tags": {"$and": [None]}}, {"warranty"}),
        ({"tags": {"$and": ["policy", None]}}, set()),
        ({"tags": {"$or": ["money", None]}}, {"refunds", "warranty"}),
        ({"tags": {"$and": ["nosuchtag"]}}, set()),
        ({"createTime": {"$gte": "2024-01-01", "$lte": "2024-02-01"}}, {"refunds"}),
        ({"tags": {"$or": ["policy"]}, "createTime": {"$gte": "2024-05-01T00:00:00Z"}}, {"shipping"}),
        (json.dumps({"tags": {"$and": ["money"]}}), {"refunds"}),  # the node's input is a JSON string
    ],
)
def test_search_test_reads_only_the_collections_the_filter_lets_through(
    world: World, match: Any, expected: set[str]
) -> None:
    assert searched(world, match) == expected


def test_a_filter_that_cannot_be_read_is_refused_with_the_reason(world: World) -> None:
    body = {"datasetId": world.dataset_id, "text": "refunds", "collectionFilterMatch": "{tags: oops"}
    message = refused(world.client.post(f"{KB}/searchTest", json=body), 400, "invalidParams")
    assert message.startswith("collectionFilterMatch: not valid JSON")
    body["collectionFilterMatch"] = {"createTime": {"$gte": "yesterday"}}
    message = refused(world.client.post(f"{KB}/searchTest", json=body), 400, "invalidParams")
    assert message.startswith("collectionFilterMatch.createTime.$gte:")


def test_the_workflow_search_node_applies_collection_filter_match(world: World) -> None:
    node = {
        "nodeId": "search",
        "name": "Knowledge search",
        "flowNodeType": "datasetSearchNode",
        "inputs": [
            {"key": "datasets", "value": [{"datasetId": world.dataset_id}]},
            {"key": "similarity", "value": 0},
            {"key": "limit", "value": 5000},
            {"key": "searchMode", "value": "embedding"},
            {"key": "collectionFilterMatch", "value": '{"tags": {"$and": ["money"]}}'},
            {"key": "userChatInput", "value": ["start", "userChatInput"]},
        ],
        "outputs": [{"id": "quoteQA", "key": "quoteQA", "type": "static", "valueType": "datasetQuote"}],
    }
    start = {
        "nodeId": "start",
        "name": "Start",
        "flowNodeType": "workflowStart",
        "inputs": [{"key": "userChatInput", "value": ""}],
        "outputs": [{"id": "userChatInput", "key": "userChatInput", "type": "static", "valueType": "string"}],
    }
    body = {
        "name": "Filtered search",
        "type": "advanced",
        "modules": [start, node],
        "edges": [
            {
                "source": "start",
                "target": "search",
                "sourceHandle": "start-source-right",
                "targetHandle": "search-target-left",
            }
        ],
    }
    app_id = ok(world.client.post("/api/core/app/create", json=body))
    request = {
        "appId": app_id,
        "detail": True,
        "stream": False,
        "messages": [{"role": "user", "content": "card days warranty parcels"}],
    }
    reply = world.client.post("/api/v1/chat/completions", json=request)
    assert reply.status_code == 200, reply.text
    search = next(item for item in reply.json()["responseData"] if item["moduleType"] == "datasetSearchNode")
    assert {quote["collectionId"] for quote in search["quoteList"]} == {world.collections["refunds"]}
