"""Background job workers: claim a job, keep its lease alive, run its handler, record the outcome.

The same loop runs inside ``fathom serve`` (in-process workers) and in ``fathom worker`` processes on other
machines; they all claim from the one jobs table.
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

from fathom.store.protocols import JobQueue, JobRecord, PermanentJobFailure

JobHandler = Callable[[JobRecord], Coroutine[Any, Any, dict[str, Any] | None]]

log = logging.getLogger("fathom.worker")


def new_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


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
    ) -> None:
        self.queue = queue
        self.handlers = dict(handlers)
        self.worker_id = worker_id or new_worker_id()
        self.lease_seconds = lease_seconds
        self.poll_interval = poll_interval
        self.retry_delay_seconds = retry_delay_seconds
        self.jobs_run = 0

    async def _keep_lease(self, job: JobRecord, lost: asyncio.Event) -> None:
        while True:
            await asyncio.sleep(self.lease_seconds / 3)
            if not await self.queue.heartbeat(job.id, self.worker_id, lease_seconds=self.lease_seconds):
                lost.set()
                return

    async def run_job(self, job: JobRecord) -> None:
        handler = self.handlers.get(job.kind)
        if handler is None:
            await self.queue.fail(job.id, self.worker_id, f"no handler for job kind {job.kind!r}")
            return
        lost = asyncio.Event()
        keeper = asyncio.create_task(self._keep_lease(job, lost))
        work = asyncio.create_task(handler(job))
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
            except PermanentJobFailure as exc:  # no retry can fix it: failed at once with the reason
                log.warning("job %s (%s) failed for good: %s", job.id, job.kind, exc)
                await self.queue.fail(job.id, self.worker_id, str(exc), permanent=True)
                return
            except Exception as exc:  # the job's own failure: recorded, retried while attempts remain
                log.warning("job %s (%s) failed: %s", job.id, job.kind, exc)
                await self.queue.fail(
                    job.id,
                    self.worker_id,
                    f"{type(exc).__name__}: {exc}",
                    retry_delay_seconds=self.retry_delay_seconds,
                )
                return
            await self.queue.complete(job.id, self.worker_id, result)
        finally:
            keeper.cancel()
            lost_wait.cancel()
            if not work.done():
                work.cancel()
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
        """Run jobs until the queue has none ready (or ``max_jobs`` ran); returns how many ran."""
        count = 0
        while (max_jobs is None or count < max_jobs) and await self.run_once():
            count += 1
        return count

    async def run_forever(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                ran = await self.run_once()
            except Exception:  # the database blinked: log, wait, go on
                log.exception("worker %s could not claim a job", self.worker_id)
                ran = False
            if not ran:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), timeout=self.poll_interval)
