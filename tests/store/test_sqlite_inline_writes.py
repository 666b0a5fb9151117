"""On a SQLite file the hot path's small batches run on the event loop's thread when SQLite takes them at
once, and on a worker thread when another writer holds the database: the loop never waits on a lock, a
write that met a lock still lands, and the loop's own writes keep the WAL checkpointed."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import Connection, text

from fathom.store import migrate
from fathom.store.db import Database


@pytest.fixture
async def sqlite_file(tmp_path: Path) -> Database:
    db = Database(f"sqlite:///{tmp_path / 'fathom.db'}")
    await migrate.upgrade(db)
    create = "CREATE TABLE note (id INTEGER PRIMARY KEY, body TEXT)"
    await db.run_write(lambda conn: conn.exec_driver_sql(create))
    return db


def _insert(body: str) -> Callable[[Connection], None]:
    def work(conn: Connection) -> None:
        conn.execute(text("INSERT INTO note (body) VALUES (:b)"), {"b": body})
        conn.execute(text("INSERT INTO note (body) VALUES (:b)"), {"b": body + "-2"})

    return work


def _bodies(conn: Connection) -> list[str]:
    return [row[0] for row in conn.execute(text("SELECT body FROM note ORDER BY id"))]


async def test_an_uncontended_write_runs_on_the_event_loops_thread(sqlite_file: Database) -> None:
    threads: list[str] = []

    def work(conn: Connection) -> None:
        threads.append(threading.current_thread().name)
        _insert("a")(conn)

    await sqlite_file.run_write(work)
    assert threads == [threading.current_thread().name]
    assert await sqlite_file.run_read(_bodies) == ["a", "a-2"]
    await sqlite_file.close()


async def test_a_write_while_another_process_holds_the_database_waits_on_a_worker_thread_and_lands(
    sqlite_file: Database, tmp_path: Path
) -> None:
    other = sqlite3.connect(tmp_path / "fathom.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another writer (say, `fathom worker`) holds the write lock
    other.execute("INSERT INTO note (body) VALUES ('other')")
    threads: list[str] = []

    def work(conn: Connection) -> None:
        threads.append(threading.current_thread().name)
        _insert("mine")(conn)

    pending = asyncio.ensure_future(sqlite_file.run_write(work))
    ticks = 0
    for _ in range(20):  # the event loop keeps running while the write waits
        await asyncio.sleep(0.01)
        ticks += 1
    assert ticks == 20 and not pending.done()
    other.execute("COMMIT")
    other.close()
    await asyncio.wait_for(pending, 30)
    assert threads[-1] != threading.current_thread().name  # it ran (again) on a worker thread
    assert await sqlite_file.run_read(_bodies) == ["other", "mine", "mine-2"]  # once, not twice
    await sqlite_file.close()


async def test_a_failing_inline_write_is_rolled_back_whole(sqlite_file: Database) -> None:
    def work(conn: Connection) -> None:
        _insert("half")(conn)
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        await sqlite_file.run_write(work)
    assert await sqlite_file.run_read(_bodies) == []
    await sqlite_file.run_write(_insert("after"))  # the connection is usable again
    assert await sqlite_file.run_read(_bodies) == ["after", "after-2"]
    await sqlite_file.close()


async def test_the_loops_writes_keep_the_wal_checkpointed(sqlite_file: Database, tmp_path: Path) -> None:
    for number in range(3000):
        await sqlite_file.run_write(_insert(f"n{number}"))
    wal = tmp_path / "fathom.db-wal"
    # without checkpoints every one of the 3,000 transactions appends at least one 4 KiB page
    assert wal.stat().st_size < 3000 * 4096 / 2
    assert len(await sqlite_file.run_read(_bodies)) == 6000
    await sqlite_file.close()


def _busy_error(path: Path) -> sqlite3.OperationalError:
    """SQLite's own "database is locked" (SQLITE_BUSY), as opening a connection can meet it."""
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        sqlite3.connect(path, timeout=0, isolation_level=None).execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        return exc
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    raise AssertionError("the second writer was not refused")


async def test_a_write_whose_loop_connection_cannot_open_still_lands_and_later_writes_too(
    sqlite_file: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opening the loop's connection (its pragmas, busy timeout 0) met a busy database: the write runs on
    a worker thread instead, and the process's writer lock is free again (it was kept, and every later
    write of the process waited for it forever)."""
    batches = sqlite_file.sqlite_batches
    assert batches is not None
    batches.close()  # the next inline batch opens a fresh loop connection
    busy = _busy_error(tmp_path / "fathom.db")
    real_connect = batches.loop_engine.connect
    calls = 0

    def connect_once_busy() -> Connection:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise busy
        return real_connect()

    monkeypatch.setattr(batches.loop_engine, "connect", connect_once_busy)
    await sqlite_file.run_write(_insert("first"))
    await asyncio.wait_for(sqlite_file.run_write(_insert("second")), timeout=30)
    assert await sqlite_file.run_read(_bodies) == ["first", "first-2", "second", "second-2"]
    assert calls >= 2
    await sqlite_file.close()
