"""Issue 13 items 7 and 8, through the HTTP API. An import that can never succeed fails its job at once with
the reason (a link the egress guard refuses, also after a redirect; a 4xx answer; a document that does not
parse): the page is fetched once, not three times. What can succeed later is retried: a 5xx answer, and a
worker that died while running the job, which does not use up one of the job's attempts."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from live_support import LiveServer, free_port, ok, start_live_server

from fathom.config import Settings
from fathom.datasets.ingest import INGEST_JOB_KIND
from fathom.platform import Platform
from loopback_servers import QuietHandler, serve_on_loopback

PAGE = (
    b"<html><body><article><h1>Opening hours</h1>"
    b"<p>The shop opens at nine every weekday.</p></article></body></html>"
)


class _Site(QuietHandler):
    hits: Counter[str] = Counter()

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        _Site.hits[self.path] += 1
        if self.path == "/missing":
            self.send_body(404, b"not here")
        elif self.path == "/to-metadata":
            self.send_response(302)
            self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/flaky" and _Site.hits[self.path] == 1:
            self.send_body(503, b"busy")
        else:
            self.send_body(200, PAGE, "text/html")


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    with serve_on_loopback(_Site) as url:
        yield url


def _settings(root: Path, workers: int) -> Settings:
    return Settings(
        data_dir=root / "data",
        port=free_port(),
        workers=workers,
        egress_allow_cidrs=["127.0.0.1/32"],
        job_retry_delay_seconds=0,
    )


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from start_live_server(_settings(tmp_path_factory.mktemp("retries"), workers=1))


def _settled(client: httpx.Client, collection_id: str) -> dict[str, Any]:
    """The collection once it is ready or failed for good."""
    deadline = time.monotonic() + 60
    while True:
        item = ok(client.get("/api/core/dataset/collection/detail", params={"id": collection_id}))
        if item["status"] in ("ready", "error"):
            return dict(item)
        assert time.monotonic() < deadline, item
        time.sleep(0.1)


def _jobs_of(server: LiveServer, collection_id: str) -> list[Any]:
    platform = Platform.build(server.platform.settings)

    async def read() -> list[Any]:
        try:
            jobs = await platform.jobs.list_jobs(kind=INGEST_JOB_KIND)
            return [j for j in jobs if j.payload.get("collectionId") == collection_id]
        finally:
            await platform.db.close()

    return asyncio.run(read())


def _import_link(server: LiveServer, link: str) -> tuple[dict[str, Any], Any]:
    with server.client(server.admin_key) as client:
        dataset_id = ok(client.post("/api/core/dataset/create", json={"name": "Links"}))
        created = ok(
            client.post(
                "/api/core/dataset/collection/create/link", json={"datasetId": dataset_id, "link": link}
            )
        )
        item = _settled(client, created["collectionId"])
    (job,) = _jobs_of(server, item["_id"])
    return item, job


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/missing", "404"),
        ("/to-metadata", "Request to private network not allowed"),
    ],
)
def test_a_link_that_cannot_succeed_fails_at_once_with_the_reason(
    server: LiveServer, site: str, path: str, reason: str
) -> None:
    item, job = _import_link(server, site + path)
    assert item["status"] == "error" and reason in item["errorMsg"], item
    assert not item["errorMsg"].startswith("retrying")
    assert _Site.hits[path] == 1  # fetched once, not once per attempt
    assert job.status == "failed" and job.attempts == 1


def test_a_link_the_guard_refuses_outright_fails_at_once(server: LiveServer) -> None:
    item, job = _import_link(server, "http://169.254.169.254/latest/meta-data/")
    assert item["status"] == "error" and "not allowed" in item["errorMsg"]
    assert job.status == "failed" and job.attempts == 1


def test_a_document_that_does_not_parse_fails_at_once(server: LiveServer) -> None:
    with server.client(server.admin_key) as client:
        dataset_id = ok(client.post("/api/core/dataset/create", json={"name": "Files"}))
        created = ok(
            client.post(
                "/api/core/dataset/collection/create/localFile",
                files={"file": ("broken.pdf", b"%PDF-1.4 not really a pdf", "application/pdf")},
                data={"data": f'{{"datasetId": "{dataset_id}"}}'},
            )
        )
        item = _settled(client, created["collectionId"])
    assert item["status"] == "error" and "broken.pdf" in item["errorMsg"]
    (job,) = _jobs_of(server, item["_id"])
    assert job.status == "failed" and job.attempts == 1


def test_a_server_error_is_retried_and_the_import_succeeds(server: LiveServer, site: str) -> None:
    item, job = _import_link(server, site + "/flaky")
    assert item["status"] == "ready" and item["dataAmount"] >= 1, item
    assert _Site.hits["/flaky"] == 2
    assert job.status == "done" and job.attempts == 2


def test_workers_dying_mid_job_do_not_use_up_its_attempts(tmp_path: Path) -> None:
    """Three workers claim the ingestion and die (their leases lapse) — more deaths than the job has
    attempts. A healthy worker then ingests it: nothing was wrong with the document."""
    for live in start_live_server(_settings(tmp_path, workers=0)):
        with live.client(live.admin_key) as client:
            dataset_id = ok(client.post("/api/core/dataset/create", json={"name": "Crashes"}))
            created = ok(
                client.post(
                    "/api/core/dataset/collection/create/text",
                    json={"datasetId": dataset_id, "name": "hours", "text": "The shop opens at nine."},
                )
            )

        async def die_three_times_then_work(platform: Platform) -> int:
            try:
                for i in range(3):
                    assert await platform.jobs.claim(f"doomed-{i}", lease_seconds=0.05) is not None
                    await asyncio.sleep(0.1)  # the worker is gone: its lease lapses
                return await platform.new_worker().run_until_idle()
            finally:
                await platform.db.close()

        assert asyncio.run(die_three_times_then_work(Platform.build(live.platform.settings))) == 1
        with live.client(live.admin_key) as client:
            item = _settled(client, created["collectionId"])
        assert item["status"] == "ready" and item["dataAmount"] == 1, item
        (job,) = _jobs_of(live, item["_id"])
        assert job.status == "done" and job.attempts == 1
