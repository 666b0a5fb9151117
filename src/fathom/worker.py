"""Background job workers: claim a job, keep its lease alive, run its handler, record the outcome.

The same loop runs inside ``fathom serve`` (in-process workers) and in ``fathom worker`` processes on other
machines; they all claim from the one jobs table.

A database outage is nobody's failure: a handler that lost the database runs its step again as soon as
the database answers (the worker probes it with the job's heartbeat, backing off up to
``MAX_OUTAGE_BACKOFF_S``), without using up an attempt; the lease is kept through the outage by the
first heartbeat that gets through, so a blip shorter than the lease never looks like a dead worker.
Handlers are safe to run again (ingestion skips the chunks already written).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import uuid
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

from fathom.store.errors import database_unavailable
from fathom.store.job_doorbell import JobDoorbell
from fathom.store.protocols import JobQueue, JobRecord, PermanentJobFailure

JobHandler = Callable[[JobRecord], Coroutine[Any, Any, dict[str, Any] | None]]

log = logging.getLogger("fathom.worker")

MAX_OUTAGE_BACKOFF_S = 2.0


class LeaseLost(Exception):
    """The job's lease lapsed while its worker waited for the database: another worker may hold it."""


def _new_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


async def _stop(*tasks: asyncio.Task[Any]) -> None:
    """Cancel the job's helper tasks and wait until they have unwound. The lease keeper may be inside a
    heartbeat's transaction: cancelled but not awaited, it would still hold its database connection when
    the caller goes on, and a ``worker --once`` that then closed the database hung at exit (``asyncio.run``
    waited forever for that connection's close; aiosqlite >= 0.22 under SQLAlchemy)."""
    pending = [task for task in tasks if not task.done()]
    for task in pending:
        task.cancel()
    for outcome in await asyncio.gather(*pending, return_exceptions=True):
        if isinstance(outcome, Exception):
            log.warning("a job's helper task ended with %s: %s", type(outcome).__name__, outcome)


class JobWorker:
    """Runs jobs of the kinds it has handlers for, one at a time."""

    def __init__(
        self,
        queue: JobQueue,
        handlers: Mapping[str, JobHandler],
        *,
        worker_id: str | None = None,
        lease_seconds: float = 60.0,
        poll_interval: float = 1.0,
        retry_delay_seconds: float = 5.0,
        doorbell: JobDoorbell | None = None,
    ) -> None:
        self.queue = queue
        self.handlers = dict(handlers)
        self.worker_id = worker_id or _new_worker_id()
        self.lease_seconds = lease_seconds
        self.poll_interval = poll_interval
        self.retry_delay_seconds = retry_delay_seconds
        # rung by this process's writers of jobs: an idle worker starts a job queued here at once, not at
        # its next poll (jobs of other processes, and ones due later, wait for the poll)
        self.doorbell = doorbell or JobDoorbell()
        self.jobs_run = 0

    async def _keep_lease(self, job: JobRecord, lost: asyncio.Event) -> None:
        interval = self.lease_seconds / 3
        while True:
            await asyncio.sleep(interval)
            try:
                held = await self.queue.heartbeat(job.id, self.worker_id, lease_seconds=self.lease_seconds)
            except Exception as exc:
                if not database_unavailable(exc):
                    raise
                interval = min(self.lease_seconds / 3, MAX_OUTAGE_BACKOFF_S)  # beat as soon as it returns
                continue
            interval = self.lease_seconds / 3
            if not held:
                lost.set()
                return

    async def _wait_for_database(self, job: JobRecord) -> bool:
        """After a handler lost the database: wait (with backoff) until it answers again; True when this
        worker still holds the job then (its lease did not lapse meanwhile), False when it does not."""
        failures = 0
        while True:
            failures += 1
            await asyncio.sleep(min(MAX_OUTAGE_BACKOFF_S, 0.1 * 2**failures))
            try:
                return await self.queue.heartbeat(job.id, self.worker_id, lease_seconds=self.lease_seconds)
            except Exception as exc:
                if not database_unavailable(exc):
                    raise

    async def _run_handler(self, handler: JobHandler, job: JobRecord) -> dict[str, Any] | None:
        """The handler, run again (the same attempt) each time it lost the database and the database came
        back while the job was still this worker's."""
        outages = 0
        while True:
            try:
                return await handler(job)
            except Exception as exc:
                if not database_unavailable(exc):
                    raise
                outages += 1
                log.warning(
                    "job %s (%s) lost the database (%s); running its step again when it returns",
                    job.id,
                    job.kind,
                    type(exc).__name__,
                )
                if not await self._wait_for_database(job):
                    raise LeaseLost from None
                log.info("job %s: the database is back; running its step again (outage %d)", job.id, outages)

    async def _record(self, write: Callable[[], Coroutine[Any, Any, bool]]) -> None:
        """A job outcome's write, tried again while the database is unavailable (never lost to a blip)."""
        failures = 0
        while True:
            try:
                await write()
                return
            except Exception as exc:
                if not database_unavailable(exc):
                    raise
                failures += 1
                await asyncio.sleep(min(MAX_OUTAGE_BACKOFF_S, 0.1 * 2**failures))

    async def run_job(self, job: JobRecord) -> None:
        handler = self.handlers.get(job.kind)
        if handler is None:
            await self.queue.fail(job.id, self.worker_id, f"no handler for job kind {job.kind!r}")
            return
        lost = asyncio.Event()
        keeper = asyncio.create_task(self._keep_lease(job, lost))
        work = asyncio.create_task(self._run_handler(handler, job))
        lost_wait = asyncio.create_task(lost.wait())
        try:
            await asyncio.wait({work, lost_wait}, return_when=asyncio.FIRST_COMPLETED)
            if not work.done():  # another worker took the job over after our lease lapsed
                work.cancel()
                log.warning("job %s lost its lease; stopped", job.id)
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await work
                return
            try:
                result = work.result()
            except LeaseLost:  # the outage outlasted the lease: the job is another worker's now
                log.warning("job %s lost its lease during a database outage; left to the next claim", job.id)
                return
            except PermanentJobFailure as exc:  # no retry can fix it: failed at once with the reason
                log.warning("job %s (%s) failed for good: %s", job.id, job.kind, exc)
                reason = str(exc)
                await self._record(lambda: self.queue.fail(job.id, self.worker_id, reason, permanent=True))
                return
            except Exception as exc:  # the job's own failure: recorded, retried while attempts remain
                log.warning("job %s (%s) failed: %s", job.id, job.kind, exc)
                error = f"{type(exc).__name__}: {exc}"
                await self._record(
                    lambda: self.queue.fail(
                        job.id, self.worker_id, error, retry_delay_seconds=self.retry_delay_seconds
                    )
                )
                return
            await self._record(lambda: self.queue.complete(job.id, self.worker_id, result))
        finally:
            await _stop(keeper, lost_wait, work)
            self.jobs_run += 1

    async def run_once(self) -> bool:
        """Claim and run one job; False when none was waiting."""
        job = await self.queue.claim(
            self.worker_id, lease_seconds=self.lease_seconds, kinds=list(self.handlers)
        )
        if job is None:
            return False
        await self.run_job(job)
        return True

    async def run_until_idle(self, max_jobs: int | None = None) -> int:
        """Run jobs until the queue has none ready (or ``max_jobs`` ran); returns how many ran. A job still
        leased to another worker is not ready, even when that worker is dead: it is claimed (with the same
        attempt) once its lease runs out, by whichever worker asks then; ``fathom worker --once`` does not
        wait for it, so it always ends."""
        count = 0
        while (max_jobs is None or count < max_jobs) and await self.run_once():
            count += 1
        return count

    async def run_forever(self, stop: asyncio.Event) -> None:
        outage = False
        while not stop.is_set():
            rung = self.doorbell.rung
            try:
                ran = await self.run_once()
                outage = False
            except Exception as exc:  # the database blinked: log, wait, go on
                if not database_unavailable(exc):
                    log.exception("worker %s could not claim a job", self.worker_id)
                elif not outage:
                    log.warning(
                        "worker %s: database unavailable; claiming again when it returns", self.worker_id
                    )
                outage = outage or database_unavailable(exc)
                ran = False
            if not ran:
                await self.doorbell.wait(rung, stop, self.poll_interval)
