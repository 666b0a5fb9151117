"""``POST /api/core/dataset/searchTest`` accepts Fathom's optional ``fusion`` field."""

from __future__ import annotations

import time
from typing import Any

import httpx

DOC = "\n\n".join(
    f"## {title}\n\n{body}"
    for title, body in [
        ("Refunds", "Refunds are paid back to the original card within five working days."),
        ("Shipping", "Parcels ship from Rotterdam and arrive within three days in the EU."),
        ("Warranty", "Every device carries a two year warranty against manufacturing faults."),
    ]
)


def ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    return response.json()["data"]


def test_search_test_fusion_convex_and_invalid_value(live_server: Any) -> None:
    with live_server.client(live_server.admin_key) as client:
        dataset_id = ok(client.post("/api/core/dataset/create", json={"name": "Fusion"}))
        collection_id = ok(
            client.post(
                "/api/core/dataset/collection/create/text",
                json={"datasetId": dataset_id, "name": "faq", "text": DOC},
            )
        )["collectionId"]
        deadline = time.monotonic() + 60
        while True:
            listing = ok(client.post("/api/core/dataset/collection/listV2", json={"datasetId": dataset_id}))
            item = next(i for i in listing["list"] if i["_id"] == collection_id)
            if item["trainingAmount"] == 0 or item["hasError"]:
                break
            assert time.monotonic() < deadline, item
            time.sleep(0.2)
        query = {"datasetId": dataset_id, "text": "When are refunds paid?", "searchMode": "mixedRecall"}

        convex = ok(client.post("/api/core/dataset/searchTest", json={**query, "fusion": "convex"}))
        top = convex["list"][0]
        assert "Refunds" in top["q"]
        assert "convex" in {s["type"] for s in top["score"]} and "rrf" not in {
            s["type"] for s in top["score"]
        }
        assert "convex" in [stage["stage"] for stage in top["trace"]["stages"]]

        default = ok(client.post("/api/core/dataset/searchTest", json=query))
        assert "rrf" in {s["type"] for s in default["list"][0]["score"]}

        bad = client.post("/api/core/dataset/searchTest", json={**query, "fusion": "linear"})
        assert bad.status_code == 400 and "fusion" in bad.text
