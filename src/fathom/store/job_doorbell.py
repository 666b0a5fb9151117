"""Wakes this process's idle job workers as soon as a job is queued here, instead of at their next poll.

Every writer of a claimable job row in this process (``SqlJobQueue.enqueue`` and ``retry``, a source sync
queued with its run) rings the queue's doorbell after its transaction committed; an idle worker waits on
the doorbell and on its stop event, up to its poll interval. A job queued by another process (another
replica, ``fathom jobs retry``) or one that becomes due later (a retry's delay, a lapsed lease) is still
found by the poll (on PostgreSQL, another process's job also rings here: :func:`announce_job` and
:mod:`fathom.store.pg_job_notices`). No lost wake-up: a worker notes :attr:`JobDoorbell.rung` before it
looks for a job and :meth:`JobDoorbell.wait` returns at once when a ring came in between.
"""

from __future__ import annotations

import asyncio
import contextlib

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

JOBS_CHANNEL = "fathom_jobs"  # PostgreSQL's channel for other processes (fathom.store.pg_job_notices)
_NOTIFY = text(f"NOTIFY {JOBS_CHANNEL}")


async def announce_job(session: AsyncSession) -> None:
    """Tell every other process listening (:mod:`fathom.store.pg_job_notices`), when this transaction
    commits, that a job is claimable: PostgreSQL's ``NOTIFY``, which folds a transaction's notices into
    one; nothing on SQLite."""
    if session.bind is not None and session.bind.dialect.name == "postgresql":
        await session.execute(_NOTIFY)


class JobDoorbell:
    def __init__(self) -> None:
        self.rung = 0  # rings so far: a worker compares it before and after looking for a job
        self._waiting: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()

    def ring(self) -> None:
        """A job is claimable now: wake every waiting worker (on whatever event loop it waits)."""
        self.rung += 1
        for loop, event in list(self._waiting):
            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if loop is running:
                event.set()
            else:
                with contextlib.suppress(RuntimeError):  # that loop has closed: nothing waits there
                    loop.call_soon_threadsafe(event.set)

    async def wait(self, seen: int, stop: asyncio.Event, poll_seconds: float) -> None:
        """Until a ring after ``seen`` (:attr:`rung` noted before looking), ``stop``, or ``poll_seconds``."""
        if self.rung != seen or stop.is_set():
            return
        entry = (asyncio.get_running_loop(), asyncio.Event())
        self._waiting.add(entry)
        waits = {asyncio.ensure_future(entry[1].wait()), asyncio.ensure_future(stop.wait())}
        try:
            await asyncio.wait(waits, timeout=poll_seconds, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._waiting.discard(entry)
            for waiting in waits:
                waiting.cancel()
