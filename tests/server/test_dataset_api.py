"""The knowledge-base HTTP API on FastGPT's paths, end to end against a live server with workers."""

from __future__ import annotations

import time
from typing import Any

import httpx

DOC = "\n\n".join(
    f"## {title}\n\n" + f"{body} " * 12
    for title, body in [
        ("Refunds", "Refunds are paid back to the original card within five working days."),
        ("Shipping", "Parcels ship from Rotterdam and arrive within three days in the EU."),
        ("Warranty", "Every device carries a two year warranty against manufacturing faults."),
    ]
)


def ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["code"] == 200 and body["statusText"] == "", body
    return body["data"]


def wait_ready(
    client: httpx.Client, dataset_id: str, collection_id: str, timeout: float = 60
) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        listing = ok(
            client.post("/api/core/dataset/collection/listV2", json={"datasetId": dataset_id, "pageSize": 30})
        )
        item = next(i for i in listing["list"] if i["_id"] == collection_id)
        if item["trainingAmount"] == 0 or item["hasError"]:
            return item
        assert time.monotonic() < deadline, item
        time.sleep(0.2)


def test_text_import_is_ingested_listed_and_searchable(live_server: Any) -> None:
    with live_server.client(live_server.admin_key) as client:
        dataset_id = ok(client.post("/api/core/dataset/create", json={"name": "Support"}))
        assert len(dataset_id) == 24
        created = ok(
            client.post(
                "/api/core/dataset/collection/create/text",
                json={
                    "datasetId": dataset_id,
                    "name": "faq",
                    "text": DOC,
                    "chunkSettingMode": "custom",
                    "chunkSize": 200,
                },
            )
        )
        results = created["results"]
        assert results == {"insertLen": results["insertLen"], "overToken": [], "repeat": [], "error": []}
        item = wait_ready(client, dataset_id, created["collectionId"])
        assert item["status"] == "ready" and item["dataAmount"] >= 3 and item["hasError"] is False
        assert results["insertLen"] == item["dataAmount"]  # insertLen: the chunks the import queued
        rows = ok(
            client.post("/api/core/dataset/data/v2/list", json={"collectionId": item["_id"], "pageSize": 30})
        )
        assert rows["total"] == item["dataAmount"] and rows["list"][0]["chunkIndex"] == 0
        found = ok(
            client.post(
                "/api/core/dataset/searchTest",
                json={
                    "datasetId": dataset_id,
                    "text": "When are refunds paid back to the card?",
                    "searchMode": "mixedRecall",
                },
            )
        )
        top = found["list"][0]
        assert (
            "Refunds" in top["q"] and found["searchMode"] == "mixedRecall" and found["duration"].endswith("s")
        )
        # the default fusion (convex min-max, docs/knowledge.md §4): its score typed as FastGPT's (rrf)
        assert {s["type"] for s in top["score"]} >= {"rrf"}
        assert "convex" in [stage["stage"] for stage in top["trace"]["stages"]]
        detail = ok(client.get("/api/core/dataset/detail", params={"id": dataset_id}))
        assert detail["name"] == "Support" and detail["vectorModel"]["model"]
        listed = ok(client.post("/api/core/dataset/list", json={}))
        assert [d["_id"] for d in listed] == [dataset_id]
        progress = ok(
            client.get("/api/core/dataset/collection/trainingDetail", params={"collectionId": item["_id"]})
        )
        assert progress["trainedCount"] == item["dataAmount"]


def test_push_update_and_delete_rows(live_server: Any) -> None:
    with live_server.client(live_server.admin_key) as client:
        dataset_id = ok(client.post("/api/core/dataset/create", json={"name": "QA"}))
        collection_id = ok(
            client.post(
                "/api/core/dataset/collection/create/text",
                json={"datasetId": dataset_id, "name": "seed", "text": "Seed text about nothing."},
            )
        )["collectionId"]
        wait_ready(client, dataset_id, collection_id)
        pushed = ok(
            client.post(
                "/api/core/dataset/data/pushData",
                json={
                    "collectionId": collection_id,
                    "data": [
                        {"q": "Who are you?", "a": "Fathom bot"},
                        {"q": "Skills?", "a": "All", "indexes": [{"text": "custom idx 1"}]},
                        {"q": "", "a": "dropped: empty q"},
                    ],
                },
            )
        )
        assert pushed["insertLen"] == 2
        rows = ok(
            client.post(
                "/api/core/dataset/data/v2/list", json={"collectionId": collection_id, "searchText": "Skills"}
            )
        )
        row_id = rows["list"][0]["_id"]
        assert "custom idx 1" in [index["text"] for index in rows["list"][0]["indexes"]]
        ok(client.put("/api/core/dataset/data/update", json={"dataId": row_id, "q": "Talents?"}))
        assert ok(client.get("/api/core/dataset/data/detail", params={"id": row_id}))["q"] == "Talents?"
        assert ok(client.delete("/api/core/dataset/data/delete", params={"id": row_id})) == "success"
        missing = client.get("/api/core/dataset/data/detail", params={"id": row_id})
        assert missing.status_code == 404 and missing.json()["message"] == "Data not found"
        too_many = client.post(
            "/api/core/dataset/data/pushData",
            json={"collectionId": collection_id, "data": [{"q": "x"}] * 201},
        )
        assert too_many.status_code == 400 and too_many.json()["message"] == "Data is too long, max 200"


def test_file_upload_is_parsed_and_ingested(live_server: Any) -> None:
    with live_server.client(live_server.admin_key) as client:
        dataset_id = ok(client.post("/api/core/dataset/create", json={"name": "Files"}))
        created = ok(
            client.post(
                "/api/core/dataset/collection/create/localFile",
                files={"file": ("policy.md", DOC.encode(), "text/markdown")},
                data={"data": f'{{"datasetId": "{dataset_id}"}}'},
            )
        )
        item = wait_ready(client, dataset_id, created["collectionId"])
        assert item["name"] == "policy.md" and item["type"] == "file" and item["dataAmount"] >= 1
        empty = client.post(
            "/api/core/dataset/collection/create/localFile",
            files={"file": ("empty.md", b"", "text/markdown")},
            data={"data": f'{{"datasetId": "{dataset_id}"}}'},
        )
        assert empty.status_code == 400 and empty.json()["message"] == "file is empty"


def test_failed_ingestion_shows_the_error_and_can_be_retried(live_server: Any) -> None:
    with live_server.client(live_server.admin_key) as client:
        dataset_id = ok(client.post("/api/core/dataset/create", json={"name": "Links"}))
        created = ok(
            client.post(
                "/api/core/dataset/collection/create/link",
                json={"datasetId": dataset_id, "link": "http://127.0.0.1:1/private"},
            )
        )
        item = wait_ready(client, dataset_id, created["collectionId"], timeout=120)
        assert item["hasError"] and item["status"] == "error" and "FATHOM_EGRESS_ALLOW" in item["errorMsg"]
        ok(
            client.put(
                "/api/core/dataset/training/updateTrainingData",
                json={"datasetId": dataset_id, "collectionId": item["_id"]},
            )
        )
        again = ok(client.get("/api/core/dataset/collection/detail", params={"id": item["_id"]}))
        assert again["status"] in ("waiting", "parsing", "error")


def test_bad_requests_name_the_field(live_server: Any) -> None:
    with live_server.client(live_server.admin_key) as client:
        missing = client.post("/api/core/dataset/create", json={})
        assert missing.status_code == 400 and missing.json()["statusText"] == "missingParams"
        assert "name" in missing.json()["message"]
        bad_json = client.post(
            "/api/core/dataset/create", content=b"{nope", headers={"content-type": "application/json"}
        )
        assert bad_json.status_code == 400 and "not valid JSON" in bad_json.json()["message"]
        # an embedding model this server lacks falls back to the default one (FastGPT getEmbeddingModel)
        fallback = client.post(
            "/api/core/dataset/create", json={"name": "x", "vectorModel": "text-embedding-3-small"}
        ).json()["data"]
        detail = client.get("/api/core/dataset/detail", params={"id": fallback}).json()["data"]
        assert detail["vectorModel"]["model"] not in ("", "text-embedding-3-small")
        bad_size = client.post(
            "/api/core/dataset/collection/create/text",
            json={"datasetId": "0" * 24, "name": "n", "text": "t", "chunkSize": "big"},
        )
        assert bad_size.status_code in (400, 404)
