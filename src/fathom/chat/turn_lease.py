"""A chat turn's run state in the database: the AI item is stored ``running`` when the run starts, the
replica running it refreshes its heartbeat every third of the lease, and a ``running`` item whose
heartbeat is older than the lease lost its replica (killed, crashed, cut off): it reads as
``interrupted`` wherever the history is shown, on every replica, without anyone having to mark it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import UTC, datetime, timedelta

from fathom.store.errors import database_unavailable
from fathom.store.protocols import ChatItemRecord, ChatTurnRepository

log = logging.getLogger("fathom.chat")

RUNNING = "running"
INTERRUPTED = "interrupted"
DEFAULT_LEASE_S = 30.0

ItemKey = tuple[str, str, str]  # (app id, chat id, data id)


def chat_item_state(item: ChatItemRecord, lease_s: float, now: datetime | None = None) -> str | None:
    """``running`` (its run goes on), ``interrupted`` (its run's replica went away before finishing it)
    or None (finished: a plain item)."""
    if item.status is None:
        return None
    if item.status != RUNNING:
        return item.status
    beat = item.heartbeat_at
    if beat is None:
        return INTERRUPTED
    if beat.tzinfo is None:
        beat = beat.replace(tzinfo=UTC)
    current = now or datetime.now(UTC)
    return RUNNING if current - beat <= timedelta(seconds=lease_s) else INTERRUPTED


class TurnHeartbeat:
    """Keeps the heartbeat of this replica's running AI items fresh: one statement every ``lease_s / 3``
    seconds for all of them. A database outage skips beats (logged once); the items read as interrupted
    only if the outage outlasts the lease."""

    def __init__(self, turns: ChatTurnRepository, lease_s: float = DEFAULT_LEASE_S) -> None:
        self.turns = turns
        self.lease_s = lease_s
        self._live: dict[ItemKey, int] = {}
        self._task: asyncio.Task[None] | None = None

    def add(self, key: ItemKey) -> None:
        self._live[key] = self._live.get(key, 0) + 1
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._beat())

    def discard(self, key: ItemKey) -> None:
        count = self._live.get(key, 0) - 1
        if count > 0:
            self._live[key] = count
        else:
            self._live.pop(key, None)

    async def _beat(self) -> None:
        failing = False
        while self._live:
            await asyncio.sleep(self.lease_s / 3)
            if not self._live:
                return
            try:
                await self.turns.heartbeat(list(self._live))
            except Exception as exc:
                if not database_unavailable(exc):
                    log.exception("could not refresh the heartbeat of running chat turns")
                elif not failing:
                    log.warning(
                        "database unavailable: running chat turns keep their heartbeat when it returns"
                    )
                failing = True
                continue
            failing = False

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
