"""The sign-in attempt counters on both backends: each attempt reads its own count, a window that ended
starts over, given-back and forgotten attempts leave the count, and counters of ended windows are pruned
by the next attempt (so guessing many names does not grow the table for good)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select

from fathom.store.db import Database
from fathom.store.models import SignInAttempts
from fathom.store.repositories.accounts import SqlAccountRepository

T0 = datetime(2026, 12, 3, 9, 0, tzinfo=UTC)
WINDOW = timedelta(minutes=15)


async def _rows(database: Database) -> int:
    async with database.sessions() as session:
        return int(await session.scalar(select(func.count()).select_from(SignInAttempts)) or 0)


async def test_concurrent_attempts_each_read_a_different_count(database: Database) -> None:
    repo = SqlAccountRepository(database)
    keys = {"user": "ada", "ip": "192.0.2.1"}
    counted = await asyncio.gather(*(repo.count_attempts(keys, T0, T0 - WINDOW) for _ in range(12)))
    assert sorted(c["user"].count for c in counted) == list(range(1, 13))
    assert sorted(c["ip"].count for c in counted) == list(range(1, 13))
    assert {c["user"].window_started_at for c in counted} == {T0}


async def test_a_window_that_ended_starts_over_and_its_stale_counters_go(database: Database) -> None:
    repo = SqlAccountRepository(database)
    for name in ("a1", "a2", "a3"):
        await repo.count_attempts({"user": name, "ip": "192.0.2.9"}, T0, T0 - WINDOW)
    await repo.give_back_attempts({"ip": "192.0.2.9"})
    later = T0 + timedelta(minutes=5)
    again = await repo.count_attempts({"user": "a1", "ip": "192.0.2.9"}, later, later - WINDOW)
    assert (again["user"].count, again["ip"].count) == (2, 3)  # 3 counted, 1 given back, 1 more
    await repo.forget_attempts("user", "a1")
    assert (await repo.count_attempts({"user": "a1"}, later, later - WINDOW))["user"].count == 1
    # past the window: the counter starts over at this attempt; the other names' counters are pruned
    after = T0 + WINDOW + timedelta(seconds=1)
    fresh = await repo.count_attempts({"user": "a2", "ip": "192.0.2.9"}, after, after - WINDOW)
    assert fresh["user"].count == 1 and fresh["user"].window_started_at == after
    assert fresh["ip"].count == 1 and fresh["ip"].window_started_at == after
    assert await _rows(database) == 3  # a2, the address, and a1 (its window began at `later`)
