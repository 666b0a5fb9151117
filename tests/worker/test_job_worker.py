"""The job worker: runs handlers, records results and errors, keeps leases, gives up a lost job."""

from __future__ import annotations

import asyncio
from typing import Any

from fathom.store.db import Database
from fathom.store.protocols import JobRecord
from fathom.store.repositories import SqlJobQueue
from fathom.worker import JobWorker


async def test_worker_runs_the_handler_and_stores_its_result(database: Database) -> None:
    queue = SqlJobQueue(database)
    seen: list[dict[str, Any]] = []

    async def double(job: JobRecord) -> dict[str, Any]:
        seen.append(job.payload)
        return {"value": job.payload["n"] * 2}

    job = await queue.enqueue("double", {"n": 21})
    worker = JobWorker(queue, {"double": double})
    assert await worker.run_until_idle() == 1
    done = await queue.get(job.id)
    assert done.status == "done" and done.result == {"value": 42} and seen == [{"n": 21}]


async def test_handler_exception_is_kept_as_the_error_and_retried(database: Database) -> None:
    queue = SqlJobQueue(database)
    calls = 0

    async def flaky(job: JobRecord) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("parser crashed")

    job = await queue.enqueue("flaky", {}, max_attempts=3)
    worker = JobWorker(queue, {"flaky": flaky}, retry_delay_seconds=0)
    await worker.run_once()
    after_first = await queue.get(job.id)
    assert after_first.status == "queued" and after_first.last_error == "RuntimeError: parser crashed"
    await worker.run_once()
    assert (await queue.get(job.id)).status == "done" and calls == 2


async def test_worker_only_claims_kinds_it_can_run(database: Database) -> None:
    queue = SqlJobQueue(database)
    other = await queue.enqueue("not-mine", {})

    async def noop(job: JobRecord) -> None:
        return None

    assert await JobWorker(queue, {"mine": noop}).run_until_idle() == 0
    assert (await queue.get(other.id)).status == "queued"


async def test_heartbeats_keep_a_long_job_from_being_taken_over(database: Database) -> None:
    queue = SqlJobQueue(database)

    async def slow(job: JobRecord) -> dict[str, Any]:
        await asyncio.sleep(2.0)
        return {"ok": True}

    job = await queue.enqueue("slow", {})
    # a lease long enough for a loaded 2-core machine to send its heartbeats in time (one a third of it)
    worker = JobWorker(queue, {"slow": slow}, lease_seconds=1.0, worker_id="w1")
    running = asyncio.create_task(worker.run_once())
    await asyncio.sleep(1.5)  # past the first lease: only heartbeats keep it
    assert await queue.claim("w2", lease_seconds=10) is None
    await running
    done = await queue.get(job.id)
    assert done.status == "done" and done.attempts == 1


async def test_a_worker_that_loses_its_lease_stops_and_the_new_owner_finishes(database: Database) -> None:
    queue = SqlJobQueue(database)
    finished_by: list[str] = []
    started = asyncio.Event()

    async def work(job: JobRecord) -> dict[str, Any]:
        started.set()
        await asyncio.sleep(1.0)
        finished_by.append("first")
        return {}

    job = await queue.enqueue("work", {})
    first = JobWorker(queue, {"work": work}, lease_seconds=0.3, worker_id="first")
    task = asyncio.create_task(first.run_once())
    await started.wait()
    # Simulate a takeover: another worker steals the lease (as after a network partition).
    from sqlalchemy import update

    from fathom.store.models import Job

    async with database.transaction() as session:
        await session.execute(update(Job).where(Job.id == job.id).values(lease_owner="second"))
    await task
    assert finished_by == []  # the first worker gave up instead of finishing twice
    assert await queue.complete(job.id, "second", {"by": "second"})
    assert (await queue.get(job.id)).result == {"by": "second"}


async def test_unknown_kind_fails_with_a_clear_error(database: Database) -> None:
    queue = SqlJobQueue(database)
    job = await queue.enqueue("mystery", {}, max_attempts=1)
    worker = JobWorker(queue, {})
    claimed = await queue.claim(worker.worker_id, lease_seconds=5)
    assert claimed is not None
    await worker.run_job(claimed)
    failed = await queue.get(job.id)
    assert failed.status == "failed" and failed.last_error == "no handler for job kind 'mystery'"


async def test_run_forever_stops_when_asked(database: Database) -> None:
    queue = SqlJobQueue(database)
    stop = asyncio.Event()
    worker = JobWorker(queue, {}, poll_interval=0.05)
    task = asyncio.create_task(worker.run_forever(stop))
    await asyncio.sleep(0.1)
    stop.set()
    await asyncio.wait_for(task, timeout=2)


async def test_a_step_that_lost_the_database_runs_again_without_using_an_attempt(database: Database) -> None:
    """The handler's first run ends with the driver's 'connection lost' (what a PostgreSQL restart
    raises); the worker runs the step again once the database answers: done, one attempt, no error kept,
    no lease expiry counted."""
    import psycopg

    queue = SqlJobQueue(database)
    calls = 0

    async def blipped(job: JobRecord) -> dict[str, Any]:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise psycopg.OperationalError(
                "consuming input failed: server closed the connection unexpectedly"
            )
        return {"calls": calls}

    job = await queue.enqueue("blipped", {}, max_attempts=1)
    worker = JobWorker(queue, {"blipped": blipped}, retry_delay_seconds=0)
    await worker.run_once()
    done = await queue.get(job.id)
    assert (done.status, done.result, done.attempts, done.lease_expiries) == ("done", {"calls": 2}, 1, 0)
    assert done.last_error is None


async def test_a_real_failure_after_a_database_blip_is_still_the_jobs_failure(database: Database) -> None:
    import psycopg

    queue = SqlJobQueue(database)
    calls = 0

    async def broken(job: JobRecord) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise psycopg.OperationalError("connection refused")
        raise ValueError("the document is empty")

    job = await queue.enqueue("broken", {}, max_attempts=1)
    await JobWorker(queue, {"broken": broken}, retry_delay_seconds=0).run_once()
    failed = await queue.get(job.id)
    assert (failed.status, failed.last_error, calls) == ("failed", "ValueError: the document is empty", 2)


class _SlowHeartbeats(SqlJobQueue):
    """A job queue whose heartbeat is still in the database (a pause, then the real statement) when the job
    ends: ``in_flight`` is set once one has started, ``unwound`` once one has ended (cancelled or not)."""

    def __init__(self, database: Database) -> None:
        super().__init__(database)
        self.in_flight = asyncio.Event()
        self.unwound = False

    async def heartbeat(self, job_id: str, worker_id: str, *, lease_seconds: float) -> bool:
        self.in_flight.set()
        try:
            await asyncio.sleep(0.5)
            return await super().heartbeat(job_id, worker_id, lease_seconds=lease_seconds)
        finally:
            self.unwound = True


async def test_a_heartbeat_in_flight_when_the_job_ends_is_over_before_the_worker_moves_on(
    database: Database,
) -> None:
    """The lease keeper, cancelled in the middle of a heartbeat, has given its database connection back
    before the worker claims again or its process closes the database: a ``fathom worker --once`` whose
    keeper was left cancelling hung at exit (tests/cli/test_killed_qa_worker.py ran past its 300 s)."""
    queue = _SlowHeartbeats(database)

    async def quick(job: JobRecord) -> dict[str, Any]:
        await queue.in_flight.wait()  # the job ends while its heartbeat is in the database
        return {"ok": True}

    job = await queue.enqueue("quick", {})
    worker = JobWorker(queue, {"quick": quick}, lease_seconds=0.15)
    assert await worker.run_once()
    assert queue.unwound  # nothing of the job is left running behind the worker
    assert (await queue.get(job.id)).status == "done"
