"""The chat hot path's access to a SQLite file: small batches of SQLAlchemy Core statements.

Serves :meth:`Database.run_read <fathom.store.db.Database.run_read>` and ``run_write``: the app read, the
key lookup, a chat turn's history read and its two transactions, the turn heartbeat, the key usage flush.

A batch runs **on the event loop's thread** on a connection whose busy timeout is 0, kept open per thread:
SQLite answers such a batch in tens of microseconds, less than a thread hop costs (+41 % no-model chat
requests per CPU-second against one ``asyncio.to_thread`` hop per batch; keeping the connection open
instead of a pool check-out per batch +10 %; ``docs/benchmarks.md``). When SQLite cannot take it at once
(another process, or a worker thread of this one, holds the write lock) nothing has been done, and the
batch runs on a **worker thread** in one hop, on a synchronous engine with a 30 s busy timeout, where it
may wait: the loop never waits on a lock. Writers of this process queue on one lock rather than on
SQLite's busy timeout. Either way one hop at most per batch, where aiosqlite makes one per cursor call
(a chat completion was 77 thread hops before, 2 with the worker thread alone, 0 now).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy import Connection, create_engine, event

from fathom import json_text
from fathom.store.errors import sqlite_busy

T = TypeVar("T")
WRITE = "BEGIN IMMEDIATE"  # a write batch's transaction: it takes the write lock at its start
SNAPSHOT = "BEGIN"  # a read batch of several statements: one snapshot for all
_MISS = object()


def apply_sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    """Every SQLite connection of Fathom's: WAL, foreign keys on, 30 s busy timeout, synchronous NORMAL."""
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _loop_pragmas(dbapi_connection: Any, record: Any) -> None:
    """The event loop's own connection never waits: a locked database sends the work to a worker thread.
    Its commits checkpoint the WAL as SQLite's do (passively, once it passes 1,000 pages: a few
    milliseconds of the loop's time every few hundred chat turns)."""
    apply_sqlite_pragmas(dbapi_connection, record)
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA busy_timeout=0")
    cursor.close()


class SqliteFileBatches:
    """Runs ``work(connection)`` batches on a SQLite file: inline when SQLite takes them at once, else in
    one hop to a worker thread."""

    def __init__(self, path: str, *, echo: bool = False) -> None:
        def engine(timeout: int, pragmas: Callable[[Any, Any], None]) -> Any:
            built = create_engine(
                f"sqlite:///{path}",
                echo=echo,
                hide_parameters=True,
                json_serializer=json_text.dumps,  # as the async engine writes and reads them
                json_deserializer=json_text.loads,
                connect_args={"timeout": timeout, "check_same_thread": False, "isolation_level": None},
            )
            event.listen(built, "connect", pragmas)
            return built

        self.worker_engine = engine(30, apply_sqlite_pragmas)
        self.loop_engine = engine(0, _loop_pragmas)
        self._loop_local = threading.local()
        self._loop_connections: list[Connection] = []
        self._lock = threading.Lock()  # guards the list above
        self._writer_lock = threading.Lock()

    async def run(self, work: Callable[[Connection], T], begin: str | None) -> T:
        """``work`` in one transaction opened by ``begin`` (:data:`WRITE`, :data:`SNAPSHOT`; None: one
        statement in its own snapshot), committed when it returns, rolled back if it raises."""
        done = self._run_inline(work, begin)
        if done is not _MISS:
            return done  # type: ignore[return-value]
        return await asyncio.to_thread(self._run_on_worker, work, begin)

    def _run_inline(self, work: Callable[[Connection], T], begin: str | None) -> T | object:
        """``work`` on the event loop's thread, or ``_MISS`` (nothing done, nothing kept) when SQLite or
        this process's writer lock would make it wait."""
        writing = begin == WRITE
        if writing and not self._writer_lock.acquire(blocking=False):
            return _MISS
        try:
            conn = self._loop_connection()  # a new one runs its pragmas: SQLite may refuse them at once
        except BaseException as exc:
            if writing:
                self._writer_lock.release()  # kept, every later write of this process waited for it
            if sqlite_busy(exc):
                return _MISS
            raise
        try:
            result = _transact(conn, work, begin)
        except BaseException as exc:
            self._loop_local.connection = None  # a fresh connection for the next batch
            with self._lock:
                self._loop_connections.remove(conn)
            conn.close()
            if sqlite_busy(exc):
                return _MISS  # rolled back (or never begun): the worker thread runs it again
            raise
        finally:
            if writing:
                self._writer_lock.release()
        return result

    def _loop_connection(self) -> Connection:
        """This thread's own connection for inline batches, kept open between them (a batch runs
        without awaiting, so no two share it): no pool check-out and reset per batch."""
        conn: Connection | None = getattr(self._loop_local, "connection", None)
        if conn is None or conn.closed:
            conn = self.loop_engine.connect()
            self._loop_local.connection = conn
            with self._lock:
                self._loop_connections.append(conn)
        return conn

    def _run_on_worker(self, work: Callable[[Connection], T], begin: str | None) -> T:
        writing = begin == WRITE
        if writing:
            self._writer_lock.acquire()
        try:
            with self.worker_engine.connect() as conn:
                return _transact(conn, work, begin)
        finally:
            if writing:
                self._writer_lock.release()

    def close(self) -> None:
        with self._lock:
            for conn in self._loop_connections:
                conn.close()
            self._loop_connections.clear()
        self._loop_local = threading.local()
        self.loop_engine.dispose()
        self.worker_engine.dispose()


def _transact(conn: Connection, work: Callable[[Connection], T], begin: str | None) -> T:
    if begin is None:  # one statement: its own snapshot
        return work(conn)
    # the transaction's bounds straight on the driver's connection (autocommit mode: SQLAlchemy keeps no
    # transaction state of its own here), two statement executions fewer per batch
    raw = conn.connection.driver_connection
    assert raw is not None
    raw.execute(begin)
    try:
        result = work(conn)
    except BaseException:
        if raw.in_transaction:
            raw.execute("ROLLBACK")
        raise
    raw.execute("COMMIT")
    return result
