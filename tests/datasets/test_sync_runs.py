"""Sync runs as jobs, on each database backend: the ``autoSync`` scheduler's claim (several workers tick
at once, one sync is queued), and a run whose worker is stopped midway (what it swapped in stays whole,
the page it was embedding shows no half update, and the run resumes without re-embedding what it did)."""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from fathom.config import Settings
from fathom.datasets.sync import SYNC_JOB_KIND, SyncScheduler, WebsiteConfig
from fathom.platform import Bootstrap, Platform
from fathom.store.db import Database
from fathom.store.job_doorbell import JobDoorbell
from fathom.store.knowledge import SqlChunkRepository
from fathom.store.knowledge.sources import SqlSourceRepository, SyncJob
from fathom.store.models import utcnow
from fathom.testing.fake_vectors import hash_embedding
from fathom.testing.scripted_openai import ScriptedOpenAIServer
from loopback_servers import serve_on_loopback
from source_servers import Site, page

#: the embedding server holds a request for the Beta page until the test lets it go
HOLD = threading.Event()
HELD = threading.Event()


def _embed(text: str, dim: int) -> list[float]:
    if "Beta" in text and not HOLD.is_set():
        HELD.set()
        HOLD.wait(timeout=60)
    return hash_embedding(text, dim)


@pytest.fixture
def scripted() -> Iterator[ScriptedOpenAIServer]:
    HOLD.set()  # nothing held unless a test asks
    HELD.clear()
    with ScriptedOpenAIServer(embed_fn=_embed) as server:
        yield server
    HOLD.set()


@pytest.fixture
def site() -> Iterator[str]:
    Site.robots = ""
    Site.pages = {
        "/": page("Home", "The home page of the handbook.", ("/a", "/b", "/c")),
        "/a": page("Alpha", "Alpha explains the first steps."),
        "/b": page("Beta", "Beta explains the backups."),
        "/c": page("Gamma", "Gamma explains the cooling."),
    }
    with serve_on_loopback(Site) as url:
        yield url


def _settings(root: Path, scripted: ScriptedOpenAIServer) -> Settings:
    models = root / "models.yaml"
    models.write_text(
        "default_embedding: scripted-embedding\nmodels:\n"
        f"  - {{id: scripted-embedding, type: embedding, base_url: '{scripted.base_url}', "
        "max_retries: 0, dimensions: 64}\n",
        encoding="utf-8",
    )
    settings = Settings(
        data_dir=root / "data", workers=0, models_file=models, egress_allow_cidrs=["127.0.0.1/32"]
    )
    settings.ensure_data_dir()
    return settings


@pytest.fixture
async def platforms(
    database: Database, tmp_path: Path, scripted: ScriptedOpenAIServer
) -> AsyncIterator[tuple[Platform, Platform, Bootstrap]]:
    """Two platforms (two workers' worth of connections) on one database."""
    from fathom.llm import load_model_registry

    settings = _settings(tmp_path, scripted)
    first = Platform(
        settings=settings, db=database, secret_key="k" * 32, models=load_model_registry(settings)
    )
    boot = await first.bootstrap()
    other_db = Database(database.url)
    second = Platform(
        settings=settings, db=other_db, secret_key="k" * 32, models=load_model_registry(settings)
    )
    yield first, second, boot
    await other_db.close()


async def _dataset(p: Platform, boot: Bootstrap, name: str = "Handbook") -> Any:
    return await p.datasets.create_dataset(boot.team_id, name, vector_model=p.embedders.default_model_id)


async def test_two_workers_ticking_at_once_queue_one_scheduled_sync(
    platforms: tuple[Platform, Platform, Bootstrap], site: str
) -> None:
    first, second, boot = platforms
    dataset = await _dataset(first, boot)
    config = WebsiteConfig(url=f"{site}/")
    await first.syncs.configure_website(dataset, config, auto_sync=True, interval=3600)
    due = utcnow() + timedelta(hours=2)
    one, two = first.sync_scheduler(), second.sync_scheduler()
    queued = await asyncio.gather(one.tick(due), two.tick(due), one.tick(due), two.tick(due))
    scheduled = [sync for batch in queued for sync in batch]
    assert len(scheduled) == 0  # the first crawl (queued at creation) is still waiting: none on top
    await first.new_worker().run_until_idle()  # the creation's crawl runs

    queued = await asyncio.gather(one.tick(due), two.tick(due))
    assert queued == [[], []]  # the claim moved next_sync_at on even though the dataset was busy
    later = due + timedelta(hours=2)
    queued = await asyncio.gather(one.tick(later), two.tick(later), one.tick(later))
    scheduled = [sync for batch in queued for sync in batch]
    assert len(scheduled) == 1 and scheduled[0].trigger == "schedule"
    jobs = [job for job in await first.jobs.list_jobs(kind=SYNC_JOB_KIND) if job.status == "queued"]
    assert [job.payload["syncId"] for job in jobs] == [scheduled[0].id]
    await second.new_worker().run_until_idle()
    (latest, *_) = await first.syncs.history(dataset.id)
    assert latest.status == "done" and latest.counts["unchanged"] == 4 and latest.counts["added"] == 0


class _StopAfter(logging.Handler):
    """Collects the records of a logger and sets ``stop`` once it holds ``count`` of them."""

    def __init__(self, stop: asyncio.Event, count: int) -> None:
        super().__init__(logging.INFO)
        self.stop, self.count = stop, count
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
        if len(self.records) >= self.count:
            self.stop.set()


async def test_a_scheduler_that_loses_the_database_logs_one_line_per_tick_and_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with socket.socket() as sock:  # a loopback port where no database answers (connection refused)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    db = Database(f"postgresql+psycopg://fathom@127.0.0.1:{port}/fathom")
    scheduler = SyncScheduler(
        SqlSourceRepository(db, SqlChunkRepository(db), JobDoorbell()),
        SyncJob(SYNC_JOB_KIND),
        tick_seconds=0.05,
    )
    stop = asyncio.Event()
    caplog.set_level(logging.INFO, logger="fathom.sync")
    handler = _StopAfter(stop, count=2)  # it ticked again after the first loss
    logging.getLogger("fathom.sync").addHandler(handler)
    try:
        await asyncio.wait_for(scheduler.run_forever(stop), timeout=60)  # returns: no exception escaped
    finally:
        logging.getLogger("fathom.sync").removeHandler(handler)
        await db.close()
    assert len(handler.records) == 2  # one line per tick, and the loop stopped when asked
    assert [(r.levelname, r.exc_info) for r in handler.records] == [("WARNING", None)] * 2
    assert handler.records[0].getMessage() == (
        "the sync scheduler lost the database (OperationalError); checking for due syncs again in 0.05 s"
    )


async def _chunks(p: Platform, boot: Bootstrap, dataset_id: str) -> dict[str, list[str]]:
    collections, _ = await p.datasets.list_collections(boot.team_id, dataset_id, limit=100)
    found: dict[str, list[str]] = {}
    for collection in collections:
        rows, _ = await p.chunks.list_chunks(boot.team_id, collection.id)
        found[str(collection.raw_link)] = [row.q for row in rows]
    return found


async def test_a_sync_stopped_midway_keeps_whole_pages_and_resumes(
    platforms: tuple[Platform, Platform, Bootstrap], site: str, scripted: ScriptedOpenAIServer
) -> None:
    first, second, boot = platforms
    dataset = await _dataset(first, boot)
    await first.syncs.configure_website(dataset, WebsiteConfig(url=f"{site}/"), auto_sync=False)
    HOLD.clear()
    job = await first.jobs.claim("doomed", lease_seconds=0.2, kinds=[SYNC_JOB_KIND])
    assert job is not None
    running = asyncio.create_task(first.syncs.run(job))
    assert await asyncio.to_thread(HELD.wait, 60)  # the run is embedding the Beta page
    running.cancel()  # the worker stops here, as if killed
    with pytest.raises(asyncio.CancelledError):
        await running
    HOLD.set()

    chunks = await _chunks(first, boot, dataset.id)
    assert chunks[f"{site}/"] and chunks[f"{site}/a"]  # swapped in whole before the stop
    assert chunks[f"{site}/b"] == []  # the page being embedded: no half update
    assert f"{site}/c" not in chunks
    (stopped,) = await first.syncs.history(dataset.id)
    assert stopped.status == "running"

    embedded_before = len(scripted.embedding_requests)
    await asyncio.sleep(0.3)  # the doomed worker's lease lapses
    assert await second.new_worker().run_until_idle() == 1
    (resumed,) = await first.syncs.history(dataset.id)
    assert resumed.status == "done" and resumed.attempts == 2, resumed
    assert (resumed.counts["unchanged"], resumed.counts["added"]) == (2, 2), resumed.counts
    texts = [t for body in scripted.embedding_requests[embedded_before:] for t in body["input"]]
    assert texts and not any("home page" in t or "first steps" in t for t in texts)  # not embedded again
    chunks = await _chunks(first, boot, dataset.id)
    assert all(chunks[f"{site}{path}"] for path in ("/", "/a", "/b", "/c"))
