"""A job queued through the API starts at once on the server's own workers, not at their next poll.

The servers here poll for jobs once an hour (``FATHOM_JOB_POLL_SECONDS=3600``): their workers, idle since
the start, reach an import, a re-embedding or a website sync only because queuing it rang the job queue's
doorbell (``fathom.store.job_doorbell``). Without the doorbell every wait below would run out. On SQLite
and PostgreSQL, with the scripted embedding model (each text's own hash vector)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from live_support import FAQ, LiveServer, backend_settings, ok, start_live_server

from fathom.testing.scripted_openai import ScriptedOpenAIServer
from loopback_servers import serve_on_loopback
from source_servers import Site, page

HOURLY = 3600.0


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def server(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    with ScriptedOpenAIServer() as scripted:
        models = tmp_path_factory.mktemp("models") / "models.yaml"
        models.write_text(
            "default_embedding: scripted-embedding\n"
            "models:\n"
            f"  - {{id: scripted-embedding, type: embedding, base_url: '{scripted.base_url}', "
            "max_retries: 0, dimensions: 256}\n"
            f"  - {{id: scripted-embedding-2, type: embedding, base_url: '{scripted.base_url}', "
            "max_retries: 0, dimensions: 256}\n",
            encoding="utf-8",
        )
        settings = backend_settings(
            request,
            tmp_path_factory,
            "jobs_at_once",
            workers=1,
            job_poll_seconds=HOURLY,
            models_file=models,
            egress_allow_cidrs=["127.0.0.1/32"],
        )
        yield from start_live_server(settings)


@pytest.fixture
def client(server: LiveServer) -> Iterator[httpx.Client]:
    with server.client(server.admin_key) as http:
        yield http


def _until(what: str, done: Callable[[], Any]) -> Any:
    """``done()``'s answer once it is truthy; fails after 60 s (an hourly poll would take up to 3,600)."""
    deadline = time.monotonic() + 60
    while not (answer := done()):
        assert time.monotonic() < deadline, f"{what}: not done after 60 s"
        time.sleep(0.05)
    return answer


def _collection(client: httpx.Client, dataset_id: str, collection_id: str) -> dict[str, Any]:
    listing = ok(client.post("/api/core/dataset/collection/listV2", json={"datasetId": dataset_id}))
    return dict(next(item for item in listing["list"] if item["_id"] == collection_id))


def test_an_imported_text_is_indexed_though_the_workers_poll_hourly(client: httpx.Client) -> None:
    dataset_id = str(ok(client.post("/api/core/dataset/create", json={"name": "Handbook"})))
    created = client.post(
        "/api/core/dataset/collection/create/text",
        json={"datasetId": dataset_id, "name": "faq", "text": FAQ},
    )
    collection_id = ok(created)["collectionId"]
    ready = _until(
        "the import", lambda: (c := _collection(client, dataset_id, collection_id))["status"] == "ready" and c
    )
    assert ready["trainingAmount"] == 0 and not ready["hasError"] and ready["dataAmount"] >= 3, ready
    found = ok(
        client.post("/api/core/dataset/searchTest", json={"datasetId": dataset_id, "text": "refunds card"})
    )
    assert any("original card" in quote["q"] for quote in found["list"]), found


def test_a_new_embedding_model_reembeds_the_knowledge_base_though_the_workers_poll_hourly(
    client: httpx.Client,
) -> None:
    dataset_id = str(ok(client.post("/api/core/dataset/create", json={"name": "Rebuilt"})))
    collection_id = ok(
        client.post(
            "/api/core/dataset/collection/create/text",
            json={"datasetId": dataset_id, "name": "faq", "text": FAQ},
        )
    )["collectionId"]
    _until("the import", lambda: _collection(client, dataset_id, collection_id)["status"] == "ready")
    change = {"id": dataset_id, "vectorModel": "scripted-embedding-2"}
    ok(client.post("/api/core/dataset/update", json=change))

    def rebuilt() -> bool:
        detail = ok(client.get("/api/core/dataset/detail", params={"id": dataset_id}))
        return bool(detail["vectorModel"]["model"] == "scripted-embedding-2")

    _until("the re-embedding", rebuilt)
    query = {"datasetId": dataset_id, "text": "two year warranty"}
    found = ok(client.post("/api/core/dataset/searchTest", json=query))
    assert any("warranty" in quote["q"] for quote in found["list"]), found


def test_a_website_sync_runs_though_the_workers_poll_hourly(client: httpx.Client) -> None:
    Site.hits.clear()
    Site.robots = ""
    Site.pages = {"/kb/": page("Start", "The start page explains the backup schedule of the server.")}
    with serve_on_loopback(Site) as site:
        body = {"name": "Site", "type": "websiteDataset", "websiteConfig": {"url": f"{site}/kb/"}}
        dataset_id = str(ok(client.post("/api/core/dataset/create", json=body)))

        def settled() -> list[dict[str, Any]] | None:
            runs = ok(client.post("/api/core/dataset/syncHistory", json={"datasetId": dataset_id}))
            return runs if runs and all(run["status"] in ("done", "failed") for run in runs) else None

        runs = _until("the sync", settled)
    assert runs[0]["status"] == "done" and runs[0]["added"] == 1, runs
