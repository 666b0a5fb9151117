"""The job queue's doorbell (``fathom.store.job_doorbell``) and an idle worker waiting on it."""

from __future__ import annotations

import asyncio
import threading

from fathom.store.db import Database
from fathom.store.job_doorbell import JobDoorbell
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
