"""The deployment guide's layout: replicas with ``FATHOM_WORKERS=0`` and a dedicated ``fathom worker``, on one
PostgreSQL. A text imported through the replica is claimed by the worker as soon as its job is committed
(PostgreSQL's ``NOTIFY``, ``fathom.store.pg_job_notices``), not at the worker's next poll: the worker here
polls hourly, so only the notice can make the import ready in time. When the database drops the worker's
listening connection (a restart, a failover, an idle-connection reaper), the worker listens again and the
next import is claimed at once too."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import psycopg
import pytest
from cluster_support import FathomProcess, fathom_env, free_port, printed_admin_key, wait_healthy

from fathom.store.pg_embedded import EmbeddedPostgres
from fathom.store.pg_job_notices import APPLICATION_NAME
from fathom.store.pg_reads import libpq_conninfo
from fathom.testing import ScriptedOpenAIServer

SECRET = "dedicated-worker-secret-key-0123456789"
READY_WITHIN = 60.0  # seconds: far below the worker's hourly poll, far above a claimed import's work


@dataclass
class Installation:
    base_url: str
    admin_key: str
    conninfo: str
    worker: FathomProcess

    def client(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.base_url, headers={"Authorization": f"Bearer {self.admin_key}"}, timeout=30
        )

    def listeners(self) -> list[int]:
        """The backend pids of the worker's listening connections."""
        with psycopg.connect(self.conninfo, autocommit=True) as conn:
            rows = conn.execute(
                "SELECT pid FROM pg_stat_activity "
                "WHERE application_name = %s AND datname = current_database()",
                (APPLICATION_NAME,),
            ).fetchall()
        return [int(row[0]) for row in rows]


@pytest.fixture(scope="module")
def installation(
    tmp_path_factory: pytest.TempPathFactory, postgres_server: EmbeddedPostgres
) -> Iterator[Installation]:
    root = tmp_path_factory.mktemp("dedicated-worker")
    database_url = postgres_server.create_database(f"dedicated_{free_port()}")
    with ScriptedOpenAIServer() as model:
        models = root / "models.yaml"
        models.write_text(
            "default_embedding: scripted-embedding\nmodels:\n"
            f"  - {{id: scripted-embedding, type: embedding, base_url: '{model.base_url}', "
            "dimensions: 64}\n",
            encoding="utf-8",
        )

        def env(name: str, **extra: str) -> dict[str, str]:
            return fathom_env(
                data_dir=str(root / name),
                database_url=database_url,
                secret_key=SECRET,
                seed_demo="false",
                workers="0",  # the replica runs no workers: every job goes to the dedicated one
                models_file=str(models),
                job_poll_seconds="3600",
                log_level="warning",
                **extra,
            )

        port = free_port()
        processes: list[FathomProcess] = []
        try:
            serve = FathomProcess("serve", ["serve"], env("serve", port=str(port)), root)
            processes.append(serve)
            serve.wait_for_line("Fathom ")
            admin_key = printed_admin_key(serve)
            assert admin_key is not None
            worker = FathomProcess("worker", ["worker"], env("worker"), root)
            processes.append(worker)
            worker.wait_for_line("worker ")
            base_url = f"http://127.0.0.1:{port}"
            wait_healthy(base_url, serve)
            yield Installation(base_url, admin_key, libpq_conninfo(database_url), worker)
        finally:
            for process in reversed(processes):
                process.stop()


def _import_until_ready(installation: Installation, name: str) -> None:
    with installation.client() as client:
        dataset = client.post("/api/core/dataset/create", json={"name": f"KB {name}"}).json()["data"]
        body = {"datasetId": dataset, "name": name, "text": f"## {name}\n\nRefunds take five working days."}
        created = client.post("/api/core/dataset/collection/create/text", json=body).json()
        assert created["code"] == 200, created
        collection_id = created["data"]["collectionId"]
        deadline = time.monotonic() + READY_WITHIN
        while True:
            detail = client.get("/api/core/dataset/collection/detail", params={"id": collection_id}).json()
            status = detail["data"]["status"]
            assert status != "error", detail
            if status == "ready":
                break
            assert time.monotonic() < deadline, (detail, installation.worker.log.read_text())
            time.sleep(0.05)
        found = client.post(
            "/api/core/dataset/searchTest",
            json={"datasetId": dataset, "text": "refunds", "searchMode": "fullTextRecall"},
        ).json()["data"]["list"]
        assert [item["collectionId"] for item in found] == [collection_id]


def test_an_import_through_a_replica_without_workers_is_claimed_by_the_dedicated_worker_at_once(
    installation: Installation,
) -> None:
    _import_until_ready(installation, "first")
    assert len(installation.listeners()) == 1


def test_the_worker_listens_again_after_the_database_dropped_its_connection(
    installation: Installation,
) -> None:
    before = installation.listeners()
    assert len(before) == 1
    with psycopg.connect(installation.conninfo, autocommit=True) as conn:
        assert conn.execute("SELECT pg_terminate_backend(%s)", (before[0],)).fetchone() == (True,)
    _import_until_ready(installation, "after the drop")  # queued while it reconnects, or after
    deadline = time.monotonic() + READY_WITHIN
    while not (after := installation.listeners()) or after == before:
        assert time.monotonic() < deadline, installation.worker.log.read_text()
        time.sleep(0.05)
    assert len(after) == 1 and after != before
    _import_until_ready(installation, "listening again")
    assert "job notices: not listening" in installation.worker.log.read_text()
