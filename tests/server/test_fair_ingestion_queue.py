"""The fair ingestion queue through the product: ``listV2`` shows each queued collection's place
(``queuePosition``), and ``fathom worker`` claims a one-line import of one knowledge base right after
the first document of a large import into another, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from live_support import LiveServer, free_port, ok, start_live_server

from fathom.config import Settings
from fathom.store.db import Database
from fathom.store.pg_embedded import EmbeddedPostgres
from fathom.store.repositories import SqlJobQueue

DOC = "\n\n".join(
    f"## Part {i}\n\n" + "Parcels ship from Rotterdam within three days. " * 8 for i in range(3)
)


@pytest.fixture
def idle_server(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    """A server with no in-process workers: jobs wait until ``fathom worker`` takes them."""
    url = None
    if backend == "postgres":
        server: EmbeddedPostgres = request.getfixturevalue("postgres_server")
        url = server.create_database(f"fair_{os.getpid()}_{tmp_path.name[-12:]}".replace("-", "_"))
    settings = Settings(data_dir=tmp_path / "data", port=free_port(), workers=0, database_url=url)
    yield from start_live_server(settings)


def _import_text(client: httpx.Client, dataset_id: str, name: str, text: str) -> str:
    body = {"datasetId": dataset_id, "name": name, "text": text}
    return str(ok(client.post("/api/core/dataset/collection/create/text", json=body))["collectionId"])


def _positions(client: httpx.Client, dataset_id: str) -> dict[str, int | None]:
    listing = ok(client.post("/api/core/dataset/collection/listV2", json={"datasetId": dataset_id}))
    return {item["name"]: item["queuePosition"] for item in listing["list"]}


async def _claim_order(url: str) -> list[str]:
    db = Database(url)
    try:
        done = await SqlJobQueue(db).list_jobs(status="done")
    finally:
        await db.close()
    return [job.payload["collectionId"] for job in sorted(done, key=lambda j: j.claimed_at or j.created_at)]


def test_a_one_line_import_is_taken_next_to_a_large_one(idle_server: LiveServer) -> None:
    with idle_server.client(idle_server.admin_key) as client:
        big = str(ok(client.post("/api/core/dataset/create", json={"name": "Manuals"})))
        small = str(ok(client.post("/api/core/dataset/create", json={"name": "Notes"})))
        big_ids = [_import_text(client, big, f"manual-{i}", DOC) for i in range(4)]
        note = _import_text(client, small, "note", "The office closes at five on Fridays.")

        assert _positions(client, big) == {"manual-0": 1, "manual-1": 3, "manual-2": 4, "manual-3": 5}
        assert _positions(client, small) == {"note": 2}

        settings = idle_server.platform.settings
        env = {k: v for k, v in os.environ.items() if not k.startswith("FATHOM_")}
        env.update(
            FATHOM_DATA_DIR=str(settings.data_dir),
            FATHOM_DATABASE_URL=settings.resolved_database_url,
            FATHOM_LOG_LEVEL="warning",
        )
        worker = subprocess.run(
            [sys.executable, "-m", "fathom", "worker", "--once"],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert worker.returncode == 0, worker.stderr
        assert set(_positions(client, big).values()) == {None} and _positions(client, small) == {"note": None}

    order = asyncio.run(_claim_order(settings.resolved_database_url))
    assert order == [big_ids[0], note, *big_ids[1:]]
