"""FastGPT's collection routes as its dataset docs show them now (``document/content/docs/openapi/
dataset.mdx``, bodies copied, ids substituted), on SQLite and PostgreSQL: ``PUT collection/update`` by
``id`` and by ``datasetId`` + ``externalFileId``, ``POST collection/delete {"collectionIds": [...]}`` and
the older ``DELETE ?id=``, ``tags``/``createTime``/``externalFileId`` kept on create, ``forbid`` leaving a
collection out of search, and ``createTrainingUsage`` → a ``billId`` that ``pushData`` and the imports
accept and the usage summary groups by."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from live_support import FAQ, LiveServer, backend_settings, ok, start_live_server

ENVELOPE_OK = {"code": 200, "statusText": "", "message": "", "data": None}
OBJECT_ID = re.compile(r"^[0-9a-f]{24}$")


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from start_live_server(backend_settings(request, tmp_path_factory, "collection_update", workers=1))


@pytest.fixture
def client(server: LiveServer) -> Iterator[httpx.Client]:
    with server.client(server.admin_key) as client:
        yield client


def error(response: httpx.Response, status: int, status_text: str) -> str:
    """The message of a refused request, after checking its status and FastGPT's statusText."""
    assert response.status_code == status, response.text
    body = response.json()
    assert body["statusText"] == status_text and body["data"] is None, body
    return str(body["message"])


def detail(client: httpx.Client, collection_id: str) -> dict[str, Any]:
    return dict(ok(client.get("/api/core/dataset/collection/detail", params={"id": collection_id})))


def listed(client: httpx.Client, dataset_id: str) -> dict[str, dict[str, Any]]:
    page = ok(client.post("/api/core/dataset/collection/listV2", json={"datasetId": dataset_id}))
    return {item["_id"]: item for item in page["list"]}


def virtual(client: httpx.Client, dataset_id: str, name: str, rows: list[dict[str, Any]]) -> str:
    collection_id = str(
        ok(
            client.post(
                "/api/core/dataset/collection/create",
                json={"datasetId": dataset_id, "parentId": None, "name": name, "type": "virtual"},
            )
        )
    )
    ok(client.post("/api/core/dataset/data/pushData", json={"collectionId": collection_id, "data": rows}))
    return collection_id


def wait_trained(client: httpx.Client, dataset_id: str, collection_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while (item := listed(client, dataset_id)[collection_id])["trainingAmount"]:
        assert time.monotonic() < deadline and not item["hasError"], item
        time.sleep(0.1)
    return item


def test_create_keeps_tags_create_time_and_external_file_id(client: httpx.Client) -> None:
    dataset_id = ok(client.post("/api/core/dataset/create", json={"name": "Docs"}))
    created = ok(
        client.post(
            "/api/core/dataset/collection/create/text",
            json={
                "text": FAQ,
                "datasetId": dataset_id,
                "parentId": None,
                "name": "测试训练",
                "trainingType": "chunk",
                "chunkSettingMode": "auto",
                "qaPrompt": "",
                "metadata": {},
                "tags": ["tag1", " tag2 ", "tag1", ""],
                "createTime": "2024-05-01T00:00:00.000Z",
                "externalFileId": "1111",
            },
        )
    )
    empty = ok(
        client.post(
            "/api/core/dataset/collection/create",
            json={"datasetId": dataset_id, "name": "hand-made", "type": "virtual", "tags": ["faq"]},
        )
    )
    item = listed(client, dataset_id)[created["collectionId"]]
    assert item["tags"] == ["tag1", "tag2"] and item["externalFileId"] == "1111"
    assert item["createTime"].startswith("2024-05-01T00:00:00") and item["parentId"] is None
    assert item["forbid"] is False
    assert detail(client, empty)["tags"] == ["faq"] and detail(client, empty)["externalFileId"] is None
    wait_trained(client, dataset_id, created["collectionId"])


def test_update_by_id_with_the_documented_body(client: httpx.Client) -> None:
    dataset_id = ok(client.post("/api/core/dataset/create", json={"name": "Rename"}))
    collection_id = virtual(client, dataset_id, "测试", [{"q": "Refunds take five days."}])
    answer = client.put(
        "/api/core/dataset/collection/update",
        json={
            "id": collection_id,
            "parentId": None,
            "name": "测2222试",
            "tags": ["tag1", "tag2"],
            "forbid": False,
            "createTime": "2024-01-01T00:00:00.000Z",
        },
    )
    assert answer.status_code == 200 and answer.json() == ENVELOPE_OK
    changed = detail(client, collection_id)
    assert changed["name"] == "测2222试" and changed["tags"] == ["tag1", "tag2"]
    assert changed["createTime"].startswith("2024-01-01T00:00:00") and changed["forbid"] is False
    assert changed["sourceName"] == "测2222试" and changed["parentId"] is None
    # a field left out is unchanged; tags: [] removes them; an empty name is ignored, as FastGPT does
    ok(client.put("/api/core/dataset/collection/update", json={"id": collection_id, "name": "", "tags": []}))
    again = detail(client, collection_id)
    assert (
        again["name"] == "测2222试" and again["tags"] == [] and again["createTime"] == changed["createTime"]
    )
    # the search's sources show the new name
    found = ok(client.post("/api/core/dataset/searchTest", json={"datasetId": dataset_id, "text": "refunds"}))
    assert found["list"] and found["list"][0]["sourceName"] == "测2222试"


def test_update_by_dataset_and_external_file_id(client: httpx.Client) -> None:
    dataset_id = ok(client.post("/api/core/dataset/create", json={"name": "External"}))
    collection_id = ok(
        client.post(
            "/api/core/dataset/collection/create",
            json={"datasetId": dataset_id, "name": "a.pdf", "type": "virtual", "externalFileId": "1111"},
        )
    )
    ok(
        client.put(
            "/api/core/dataset/collection/update",
            json={
                "datasetId": dataset_id,
                "externalFileId": "1111",
                "parentId": None,
                "name": "测2222试",
                "tags": ["tag1", "tag2"],
                "forbid": False,
                "createTime": "2024-01-01T00:00:00.000Z",
            },
        )
    )
    assert detail(client, collection_id)["name"] == "测2222试"
    assert detail(client, collection_id)["tags"] == ["tag1", "tag2"]
    missing = client.put(
        "/api/core/dataset/collection/update",
        json={"datasetId": dataset_id, "externalFileId": "2222", "name": "x"},
    )
    assert "externalFileId" in error(missing, 404, "fileNotFound")
    neither = client.put("/api/core/dataset/collection/update", json={"name": "x"})
    assert "id" in error(neither, 400, "missingParams")
    unknown = client.put("/api/core/dataset/collection/update", json={"id": "f" * 24, "name": "x"})
    error(unknown, 404, "unExistCollection")


def test_update_refuses_a_parent_that_is_not_a_folder(client: httpx.Client) -> None:
    dataset_id = ok(client.post("/api/core/dataset/create", json={"name": "Move"}))
    first = virtual(client, dataset_id, "first", [{"q": "one"}])
    second = virtual(client, dataset_id, "second", [{"q": "two"}])
    refused = client.put("/api/core/dataset/collection/update", json={"id": first, "parentId": second})
    message = error(refused, 400, "invalidParams")
    assert message.startswith("parentId:") and "not a folder" in message
    bad = client.put("/api/core/dataset/collection/update", json={"id": first, "forbid": "maybe"})
    assert "forbid" in error(bad, 400, "invalidParams")
    # "" and null move to the root (where it already is)
    ok(client.put("/api/core/dataset/collection/update", json={"id": first, "parentId": ""}))
    assert detail(client, first)["parentId"] is None


def test_a_forbidden_collection_is_left_out_of_search(client: httpx.Client) -> None:
    dataset_id = ok(client.post("/api/core/dataset/create", json={"name": "Forbid"}))
    refunds = virtual(client, dataset_id, "refunds", [{"q": "Refunds are paid within five days."}])
    virtual(client, dataset_id, "shipping", [{"q": "Parcels ship from Rotterdam."}])
    query = {"datasetId": dataset_id, "text": "When are refunds paid?", "searchMode": "mixedRecall"}

    def sources() -> set[str]:
        return {
            item["collectionId"]
            for item in ok(client.post("/api/core/dataset/searchTest", json=query))["list"]
        }

    assert refunds in sources()
    ok(client.put("/api/core/dataset/collection/update", json={"id": refunds, "forbid": True}))
    assert listed(client, dataset_id)[refunds]["forbid"] is True
    assert refunds not in sources()
    ok(client.put("/api/core/dataset/collection/update", json={"id": refunds, "forbid": "false"}))
    assert refunds in sources()


def test_delete_by_collection_ids_and_by_the_older_id(client: httpx.Client) -> None:
    dataset_id = ok(client.post("/api/core/dataset/create", json={"name": "Delete"}))
    first, second, third = (virtual(client, dataset_id, name, [{"q": name}]) for name in ("a", "b", "c"))
    # one unknown id among them: nothing is deleted
    mixed = client.post("/api/core/dataset/collection/delete", json={"collectionIds": [first, "f" * 24]})
    error(mixed, 404, "unExistCollection")
    assert set(listed(client, dataset_id)) == {first, second, third}
    answer = client.post("/api/core/dataset/collection/delete", json={"collectionIds": [first, second]})
    assert answer.status_code == 200 and answer.json() == ENVELOPE_OK
    assert set(listed(client, dataset_id)) == {third}
    old = client.delete("/api/core/dataset/collection/delete", params={"id": third})
    assert old.status_code == 200 and old.json() == ENVELOPE_OK
    assert listed(client, dataset_id) == {}
    found = ok(client.post("/api/core/dataset/searchTest", json={"datasetId": dataset_id, "text": "a"}))
    assert found["list"] == []
    empty = client.post("/api/core/dataset/collection/delete", json={"collectionIds": []})
    assert "collectionIds" in error(empty, 400, "missingParams")
    nothing = client.post("/api/core/dataset/collection/delete", json={})
    assert "collectionIds" in error(nothing, 400, "missingParams")


def test_a_training_bill_groups_the_usage_of_pushes_and_imports(client: httpx.Client) -> None:
    dataset_id = ok(client.post("/api/core/dataset/create", json={"name": "Billed"}))
    bill = client.post(
        "/api/support/wallet/usage/createTrainingUsage",
        json={"datasetId": dataset_id, "name": "文档训练-fastgpt.docx"},
    )
    assert bill.status_code == 200 and bill.json()["code"] == 200 and bill.json()["message"] == ""
    bill_id = bill.json()["data"]
    assert OBJECT_ID.match(bill_id)
    collection_id = virtual(client, dataset_id, "pushed", [{"q": "seed"}])
    pushed = ok(
        client.post(
            "/api/core/dataset/data/pushData",
            json={
                "collectionId": collection_id,
                "trainingType": "chunk",
                "prompt": "可选。qa 拆分引导词，chunk 模式下忽略",
                "billId": bill_id,
                "data": [
                    {"q": "你是谁？", "a": "我是FastGPT助手"},
                    {
                        "q": "你会什么？",
                        "a": "我什么都会",
                        "indexes": [{"text": "自定义索引1"}, {"text": "自定义索引2"}],
                    },
                ],
            },
        )
    )
    assert pushed["insertLen"] == 2
    imported = ok(
        client.post(
            "/api/core/dataset/collection/create/text",
            json={"datasetId": dataset_id, "name": "faq", "text": FAQ, "billId": bill_id},
        )
    )
    wait_trained(client, dataset_id, imported["collectionId"])
    summary = ok(client.get("/api/support/usage/summary"))
    (mine,) = [entry for entry in summary["byBill"] if entry["billId"] == bill_id]
    assert mine["name"] == "文档训练-fastgpt.docx" and mine["datasetId"] == dataset_id
    assert mine["records"] == 2 and mine["inputTokens"] > 0  # the push and the import
    assert any(row["appId"] is None and row["records"] >= 3 for row in summary["rows"])  # and the seed push
    # the custom indexes come back typed as sent (absent: custom), beside the default one
    rows = ok(client.post("/api/core/dataset/data/v2/list", json={"collectionId": collection_id}))["list"]
    (row,) = [r for r in rows if r["q"] == "你会什么？"]
    indexes = ok(client.get("/api/core/dataset/data/detail", params={"id": row["_id"]}))["indexes"]
    assert [(i["type"], i["text"]) for i in indexes if i["type"] != "default"] == [
        ("custom", "自定义索引1"),
        ("custom", "自定义索引2"),
    ]
    assert [i["type"] for i in indexes].count("default") >= 1


def test_a_bill_must_exist_and_its_dataset_be_writable(client: httpx.Client) -> None:
    dataset_id = ok(client.post("/api/core/dataset/create", json={"name": "Bills"}))
    collection_id = virtual(client, dataset_id, "rows", [{"q": "one"}])
    unknown = client.post(
        "/api/core/dataset/data/pushData",
        json={"collectionId": collection_id, "billId": "f" * 24, "data": [{"q": "two"}]},
    )
    message = error(unknown, 400, "invalidParams")
    assert message.startswith("billId:") and "createTrainingUsage" in message
    malformed = client.post(
        "/api/core/dataset/collection/create/text",
        json={"datasetId": dataset_id, "name": "x", "text": "y", "billId": "not-an-id"},
    )
    assert "billId" in error(malformed, 400, "invalidParams")
    no_dataset = client.post("/api/support/wallet/usage/createTrainingUsage", json={"datasetId": "f" * 24})
    error(no_dataset, 404, "unExistDataset")
    missing = client.post("/api/support/wallet/usage/createTrainingUsage", json={"name": "x"})
    assert "datasetId" in error(missing, 400, "missingParams")
    # without a name the bill is named after the knowledge base
    bill_id = ok(client.post("/api/support/wallet/usage/createTrainingUsage", json={"datasetId": dataset_id}))
    summary = ok(client.get("/api/support/usage/summary"))
    assert [b["name"] for b in summary["byBill"] if b["billId"] == bill_id] == ["Bills"]
