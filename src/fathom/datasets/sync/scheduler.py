"""The ``autoSync`` scheduler: runs beside the job workers (in ``fathom serve`` and ``fathom worker``) and
queues each knowledge base's sync when it is due.

Several processes may tick at once: the claim is a compare-and-set on the dataset's ``next_sync_at`` in
the database (:meth:`SqlSourceRepository.claim_due`), so exactly one of them queues the run, and the run
is a job like any other (one worker takes it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from datetime import UTC, datetime

from fathom.store.errors import database_unavailable
from fathom.store.knowledge.sources import SqlSourceRepository, SyncJob, SyncRecord

TICK_SECONDS = 30.0

log = logging.getLogger("fathom.sync")


class SyncScheduler:
    def __init__(
        self,
        sources: SqlSourceRepository,
        job: SyncJob,
        *,
        tick_seconds: float = TICK_SECONDS,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.sources = sources
        self.job = job
        self.tick_seconds = tick_seconds
        self.clock = clock

    async def tick(self, now: datetime | None = None) -> list[SyncRecord]:
        """Queue the syncs due at ``now`` (default: the clock's now) that this process wins."""
        queued = await self.sources.claim_due(now or self.clock(), self.job)
        for sync in queued:
            log.info("scheduled sync %s of knowledge base %s queued", sync.id, sync.dataset_id)
        return queued

    async def run_forever(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                await self.tick()
            except Exception as exc:
                if not database_unavailable(exc):
                    log.exception("the sync scheduler could not check for due syncs")
                else:  # the database blinked, as the job workers log it: one line, then the next tick
                    log.warning(
                        "the sync scheduler lost the database (%s); checking for due syncs again in %g s",
                        type(exc).__name__,
                        self.tick_seconds,
                    )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=self.tick_seconds)
