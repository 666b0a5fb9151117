"""The job queue's doorbell (``fathom.store.job_doorbell``), an idle worker waiting on it, and PostgreSQL's
notices carrying it between processes (``fathom.store.pg_job_notices``)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from pathlib import Path

import pytest
from sqlalchemy import text

from fathom.config import Settings
from fathom.platform import Platform
from fathom.store.db import Database
from fathom.store.job_doorbell import JobDoorbell, announce_job
from fathom.store.pg_job_notices import APPLICATION_NAME, JobNoticeListener
from fathom.store.protocols import JobRecord
from fathom.store.repositories import SqlJobQueue
from fathom.worker import JobWorker

HOURLY = 3600.0
GUARD = 30.0  # a wait that reaches this failed: the doorbell's only alternative is the hourly poll


def test_a_ring_since_the_worker_looked_returns_at_once() -> None:
    async def scenario() -> None:
        bell = JobDoorbell()
        seen = bell.rung
        bell.ring()  # between the worker's look and its wait: not lost
        await asyncio.wait_for(bell.wait(seen, asyncio.Event(), HOURLY), GUARD)
        assert bell.rung == seen + 1

    asyncio.run(scenario())


def test_a_ring_from_another_thread_wakes_the_waiting_worker() -> None:
    async def scenario() -> None:
        bell = JobDoorbell()
        waiting = asyncio.create_task(bell.wait(bell.rung, asyncio.Event(), HOURLY))
        await asyncio.sleep(0)  # the waiter is registered
        ringer = threading.Thread(target=bell.ring)
        ringer.start()
        await asyncio.wait_for(waiting, GUARD)
        ringer.join()

    asyncio.run(scenario())


def test_stopping_ends_the_wait_and_nothing_stays_registered() -> None:
    async def scenario() -> JobDoorbell:
        bell, stop = JobDoorbell(), asyncio.Event()
        waiting = asyncio.create_task(bell.wait(bell.rung, stop, HOURLY))
        await asyncio.sleep(0)
        stop.set()
        await asyncio.wait_for(waiting, GUARD)
        return bell

    bell = asyncio.run(scenario())
    assert not bell._waiting  # noqa: SLF001 — the waiter unregistered itself
    bell.ring()  # a ring with no one waiting (and that loop closed) is harmless


async def test_an_idle_worker_polling_hourly_runs_a_job_queued_after_it_went_idle(
    database: Database,
) -> None:
    queue = SqlJobQueue(database)
    ran: list[str] = []
    done = asyncio.Event()

    async def echo(job: JobRecord) -> None:
        ran.append(job.payload["n"])
        done.set()

    worker = JobWorker(queue, {"echo": echo}, poll_interval=HOURLY, doorbell=queue.doorbell)
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run_forever(stop))
    try:
        while not queue.doorbell._waiting:  # noqa: SLF001, ASYNC110 — idle once it found nothing and waits
            await asyncio.sleep(0.01)
        await queue.enqueue("echo", {"n": "first"})
        await asyncio.wait_for(done.wait(), GUARD)
    finally:
        stop.set()
        await asyncio.wait_for(running, GUARD)
    assert ran == ["first"]


async def test_another_processs_committed_job_rings_this_ones_doorbell_on_postgres(
    database: Database, backend: str, tmp_path: Path
) -> None:
    """PostgreSQL carries the ring between processes (``NOTIFY`` at the commit, a ``LISTEN``ing
    connection per process): here two engines on one database stand for two processes. A transaction
    that announced a job and rolled back rings nothing; on SQLite nothing listens."""
    this = Platform.build(Settings(database_url=database.url, data_dir=tmp_path / "this"))
    try:
        listener = this.job_notice_listener()
        if backend == "sqlite":
            assert listener is None  # one machine: the process's own doorbell rings
            async with database.transaction() as session:
                await announce_job(session)  # announces nothing, fails nothing
            return
        assert listener is not None
        bell, stop = this.jobs.doorbell, asyncio.Event()
        listening = asyncio.create_task(listener.run(stop))
        try:
            while listener.connections == 0:  # noqa: ASYNC110 — its LISTEN is in place
                await asyncio.sleep(0.01)
            seen = bell.rung  # the ring of its first connection included
            with contextlib.suppress(RuntimeError):
                async with database.transaction() as session:
                    await announce_job(session)
                    raise RuntimeError("rolled back")
            other = SqlJobQueue(database)  # the other process's queue
            await other.enqueue("echo", {"n": 1})
            await asyncio.wait_for(bell.wait(seen, stop, HOURLY), GUARD)
            await asyncio.sleep(0.2)  # a notice of the rolled-back transaction would have come first
            assert bell.rung == seen + 1
            assert other.doorbell.rung == 1  # and the writer rang its own process's bell
        finally:
            stop.set()
            await asyncio.wait_for(listening, GUARD)
    finally:
        await this.db.close()


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)  # SQLite has no notices
async def test_the_listener_listens_again_after_the_database_dropped_its_connection(
    database: Database,
) -> None:
    bell, stop = JobDoorbell(), asyncio.Event()
    listener = JobNoticeListener(database.url, bell, retry_seconds=0.05)
    listening = asyncio.create_task(listener.run(stop))
    try:
        while listener.connections == 0:  # noqa: ASYNC110
            await asyncio.sleep(0.01)
        async with database.engine.connect() as conn:
            dropped = await conn.execute(
                text(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE application_name = :name AND datname = current_database()"
                ),
                {"name": APPLICATION_NAME},
            )
            assert [row[0] for row in dropped] == [True]
        while listener.connections < 2:  # noqa: ASYNC110 — it connected and listens again
            await asyncio.wait_for(asyncio.sleep(0.01), GUARD)
        seen = bell.rung
        await SqlJobQueue(database).enqueue("echo", {"n": 2})
        await asyncio.wait_for(bell.wait(seen, stop, HOURLY), GUARD)
    finally:
        stop.set()
        await asyncio.wait_for(listening, GUARD)
