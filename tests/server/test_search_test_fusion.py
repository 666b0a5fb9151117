"""``POST /api/core/dataset/searchTest`` accepts Fathom's optional ``fusion`` field."""

from __future__ import annotations

from typing import Any

from live_support import create_text_dataset, ok


def test_search_test_fusion_convex_and_invalid_value(live_server: Any) -> None:
    with live_server.client(live_server.admin_key) as client:
        dataset_id = create_text_dataset(client, name="Fusion")
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
