"""FastGPT's collection and row routes that clients use to fill a knowledge base by hand, on SQLite and
PostgreSQL: ``collection/create`` (an empty collection), ``data/insertData`` (one row, stored at once),
``create/text`` answering ``insertLen`` = the chunks it queued, and ``listV2`` items with ``tmbId``,
``permission`` and ``externalFileId``."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from live_support import FAQ, LiveServer, backend_settings, ok, start_live_server


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from start_live_server(backend_settings(request, tmp_path_factory, "collections", workers=1))


def listed(client: httpx.Client, dataset_id: str) -> dict[str, dict[str, Any]]:
    page = ok(client.post("/api/core/dataset/collection/listV2", json={"datasetId": dataset_id}))
    return {item["_id"]: item for item in page["list"]}


def test_an_empty_collection_takes_inserted_and_pushed_rows(server: LiveServer) -> None:
    with server.client(server.admin_key) as client:
        member = ok(client.get("/api/v1/whoami"))["tmbId"]
        dataset_id = ok(client.post("/api/core/dataset/create", json={"name": "Manual"}))
        collection_id = ok(
            client.post(
                "/api/core/dataset/collection/create",
                json={"datasetId": dataset_id, "name": "hand-made", "type": "virtual", "metadata": {"k": 1}},
            )
        )
        item = listed(client, dataset_id)[collection_id]
        assert item["trainingAmount"] == 0 and item["dataAmount"] == 0 and item["type"] == "virtual"
        row_id = ok(
            client.post(
                "/api/core/dataset/data/insertData",
                json={
                    "collectionId": collection_id,
                    "q": "Who answers?",
                    "a": "Fathom",
                    "indexes": [{"text": "bot"}],
                },
            )
        )
        row = ok(client.get("/api/core/dataset/data/detail", params={"id": row_id}))
        pushed = ok(
            client.post(
                "/api/core/dataset/data/pushData",
                json={"collectionId": collection_id, "data": [{"q": "One"}, {"q": "Two", "a": "2"}]},
            )
        )
        item = listed(client, dataset_id)[collection_id]
        detail = ok(client.get("/api/core/dataset/collection/detail", params={"id": collection_id}))
    assert row["q"] == "Who answers?" and row["a"] == "Fathom" and row["collectionId"] == collection_id
    assert "bot" in [index["text"] for index in row["indexes"]]
    assert pushed["insertLen"] == 2 and item["dataAmount"] == 3 and item["trainingAmount"] == 0
    for view in (item, detail):
        assert view["tmbId"] == member and view["externalFileId"] is None
        assert view["permission"] == {
            "value": 4294967295,
            "isOwner": True,
            "hasManagePer": True,
            "hasWritePer": True,
            "hasReadPer": True,
        }
    assert detail["metadata"] == {"k": 1}


def test_a_text_import_answers_the_number_of_chunks_it_queued(server: LiveServer) -> None:
    with server.client(server.admin_key) as client:
        dataset_id = ok(client.post("/api/core/dataset/create", json={"name": "FAQ"}))
        created = ok(
            client.post(
                "/api/core/dataset/collection/create/text",
                json={"datasetId": dataset_id, "name": "faq", "text": FAQ * 8, "chunkSize": 200},
            )
        )
        deadline = time.monotonic() + 60
        while (item := listed(client, dataset_id)[created["collectionId"]])["trainingAmount"]:
            assert time.monotonic() < deadline and not item["hasError"], item
            time.sleep(0.1)
    assert created["results"]["insertLen"] > 1
    assert created["results"]["insertLen"] == item["dataAmount"]
