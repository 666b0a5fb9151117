"""``POST /api/core/dataset/searchTest``: Fathom's optional ``fusion`` field, and the default fusion, which
weighs the embedding leg by how much of the query the knowledge base's embedding model can read. The score
types FastGPT clients read (``embedding``, ``fullText``, ``reRank``, ``rrf``) on SQLite and PostgreSQL."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from live_support import LiveServer, create_text_dataset, free_port, ok, start_live_server

from fathom.config import Settings

# the default local model (English MiniLM) reads about a third of these characters
CHINESE = "\n\n".join(
    f"## {title}\n\n{body}"
    for title, body in [
        ("退款", "退款会在五个工作日内退回到原来的银行卡。"),
        ("发货", "包裹从鹿特丹发货，三天内送达欧盟各地。"),
        ("保修", "每台设备都享有两年的制造缺陷保修。"),
    ]
)


def _fusion_entry(item: dict[str, Any]) -> dict[str, Any]:
    (entry,) = [s for s in item["trace"]["stages"] if s["stage"] in ("rrf", "convex")]
    return entry


@pytest.fixture
def live_server(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    database_url = None
    if backend == "postgres":
        database_url = request.getfixturevalue("postgres_server").create_database(
            f"fusion_{os.getpid()}_{free_port()}"
        )
    settings = Settings(data_dir=tmp_path / "data", port=free_port(), workers=1, database_url=database_url)
    yield from start_live_server(settings)  # this module's server, once per backend


def test_search_test_fusion_convex_and_invalid_value(live_server: LiveServer) -> None:
    with live_server.client(live_server.admin_key) as client:
        dataset_id = create_text_dataset(client, name="Fusion")
        query = {"datasetId": dataset_id, "text": "When are refunds paid?", "searchMode": "mixedRecall"}

        convex = ok(client.post("/api/core/dataset/searchTest", json={**query, "fusion": "convex"}))
        top = convex["list"][0]
        assert "Refunds" in top["q"]
        # FastGPT's score types only: the fused value is typed rrf, the trace says convex made it
        assert {s["type"] for s in top["score"]} <= {"embedding", "fullText", "reRank", "rrf"}
        assert "rrf" in {s["type"] for s in top["score"]}
        assert _fusion_entry(top)["stage"] == "convex"

        # no ``fusion`` (every FastGPT client): the default, convex; an English query is read whole
        default = ok(client.post("/api/core/dataset/searchTest", json=query))
        assert "rrf" in {s["type"] for s in default["list"][0]["score"]}
        assert _fusion_entry(default["list"][0])["stage"] == "convex"
        assert [i["id"] for i in default["list"]] == [i["id"] for i in convex["list"]]
        assert "reads" not in (_fusion_entry(default["list"][0])["detail"] or "")

        rrf = ok(client.post("/api/core/dataset/searchTest", json={**query, "fusion": "rrf"}))
        assert "rrf" in {s["type"] for s in rrf["list"][0]["score"]}

        bad = client.post("/api/core/dataset/searchTest", json={**query, "fusion": "linear"})
        assert bad.status_code == 400 and "fusion" in bad.text


def test_default_fusion_weighs_the_embedding_leg_by_query_coverage(live_server: LiveServer) -> None:
    with live_server.client(live_server.admin_key) as client:
        dataset_id = create_text_dataset(client, text=CHINESE, name="中文")
        query = {"datasetId": dataset_id, "text": "退款多久能到账？", "searchMode": "mixedRecall"}

        default = ok(client.post("/api/core/dataset/searchTest", json=query))
        hits = default["list"]
        assert hits and "退款" in hits[0]["q"]
        detail = _fusion_entry(hits[0])["detail"]
        # the weight the product path used, and why: MiniLM reads only part of a Chinese query
        assert "embeddingWeight 0.5→" in detail and "of the query" in detail
        share = int(detail.split("reads ")[1].split("%")[0])
        assert 0 < share < 60

        # ``fusion: "rrf"`` is FastGPT's weighted RRF with the weights as sent: no coverage scaling
        rrf = ok(client.post("/api/core/dataset/searchTest", json={**query, "fusion": "rrf"}))
        rrf_detail = _fusion_entry(rrf["list"][0])["detail"]
        assert "×0.5" in rrf_detail and "reads" not in rrf_detail
