"""The job queue's doorbell between processes, on PostgreSQL: ``NOTIFY`` when a job is queued, ``LISTEN``
in every process that runs workers.

A job queued by one process (a ``fathom serve`` replica with ``FATHOM_WORKERS=0``, ``fathom jobs retry``)
is claimed by another (a dedicated ``fathom worker``). Without a notice that worker finds it at its next
poll (``FATHOM_JOB_POLL_SECONDS``). Every writer of a claimable job row calls
:func:`~fathom.store.job_doorbell.announce_job` inside its transaction, so PostgreSQL delivers
``NOTIFY fathom_jobs`` at the commit, and only then; each process running workers keeps one
:class:`JobNoticeListener` connection that rings its own :class:`~fathom.store.job_doorbell.JobDoorbell`
for every notice. The poll stays: it finds what no notice announces (a retry's delay over, a lapsed
lease) and whatever was queued while the listener was reconnecting (it also rings once on every
reconnection). On SQLite nothing is announced: one machine, usually one process, whose own doorbell
already rings.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import psycopg

from fathom.store.job_doorbell import JOBS_CHANNEL, JobDoorbell
from fathom.store.pg_reads import libpq_conninfo

log = logging.getLogger(__name__)

APPLICATION_NAME = "fathom-job-notices"  # how the listening connection shows in pg_stat_activity


class JobNoticeListener:
    """One ``LISTEN fathom_jobs`` connection ringing ``doorbell`` per notice; reconnects after a failure."""

    def __init__(
        self,
        url: str,
        doorbell: JobDoorbell,
        *,
        retry_seconds: float = 1.0,
        alive_check_seconds: float = 30.0,
        connect_timeout: int = 5,
    ) -> None:
        self.conninfo = libpq_conninfo(url)
        self.doorbell = doorbell
        self.retry_seconds = retry_seconds
        self.alive_check_seconds = alive_check_seconds  # a silent network loss is noticed within this
        self.connect_timeout = connect_timeout
        self.connections = 0  # connections made so far that listened (a reconnection makes it 2 and more)

    async def run(self, stop: asyncio.Event) -> None:
        """Listen until ``stop`` is set; a lost connection is logged once and made again."""
        lost = False
        while not stop.is_set():
            try:
                conn = await psycopg.AsyncConnection.connect(
                    self.conninfo,
                    autocommit=True,
                    connect_timeout=self.connect_timeout,
                    application_name=APPLICATION_NAME,
                )
            except psycopg.Error as exc:
                lost = self._lost(lost, exc)
                await _sleep_unless(stop, self.retry_seconds)
                continue
            try:
                await conn.execute(f"LISTEN {JOBS_CHANNEL}")
                self.connections += 1
                if lost:
                    log.info("job notices: listening again")
                lost = False
                self.doorbell.ring()  # jobs queued while nobody here listened
                await _until_stopped(stop, self._relay(conn))
            except Exception as exc:  # the connection broke (or anything else): listen again after a pause
                lost = self._lost(lost, exc)
                await _sleep_unless(stop, self.retry_seconds)
            finally:
                with contextlib.suppress(psycopg.Error, OSError):
                    await conn.close()

    async def _relay(self, conn: psycopg.AsyncConnection[Any]) -> None:
        while True:
            async for _notice in conn.notifies(timeout=self.alive_check_seconds):
                self.doorbell.ring()
            await conn.execute("SELECT 1")  # quiet for a while: is the connection still there?

    def _lost(self, already: bool, exc: Exception) -> bool:
        if not already:
            log.warning(
                "job notices: not listening (%s); idle workers poll for jobs until the database answers",
                str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__,
            )
        return True


async def _until_stopped(stop: asyncio.Event, work: Any) -> None:
    """Run ``work`` until it ends (raising what it raised) or ``stop`` is set (then cancel it)."""
    task = asyncio.ensure_future(work)
    stopped = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, stopped}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopped.cancel()
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    if task.done() and not task.cancelled():
        task.result()


async def _sleep_unless(stop: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), timeout=seconds)
