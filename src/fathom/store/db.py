"""The database handle: an async engine for SQLite (aiosqlite) or PostgreSQL (psycopg 3)."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, OperationalError
from sqlalchemy.exc import TimeoutError as SqlAlchemyTimeout
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

from fathom.config import ConfigError

if TYPE_CHECKING:
    from fathom.store.pg_reads import PostgresReader

T = TypeVar("T")


def normalize_database_url(url: str) -> str:
    """Pick the async driver for a plain URL: ``sqlite:///f.db`` → aiosqlite, ``postgresql://`` → psycopg."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise ConfigError(
            f"FATHOM_DATABASE_URL={url!r} is not a database URL; "
            "use sqlite:///path/to/fathom.db or postgresql://user:pass@host:5432/db."
        ) from None
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        parsed = parsed.set(drivername="sqlite+aiosqlite")
    elif backend in {"postgresql", "postgres"}:
        parsed = parsed.set(drivername="postgresql+psycopg")
    else:
        raise ConfigError(
            f"FATHOM_DATABASE_URL uses {backend!r}; Fathom supports sqlite:/// and postgresql:// URLs."
        )
    return parsed.render_as_string(hide_password=False)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _inline_pragmas(dbapi_connection: Any, record: Any) -> None:
    """The event loop's own connection never waits: a locked database sends the work to a worker thread
    (see :meth:`Database.run_write`). Its commits checkpoint the WAL as SQLite's do (passively, once it
    passes 1,000 pages: a few milliseconds of the loop's time every few hundred chat turns)."""
    _sqlite_pragmas(dbapi_connection, record)
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA busy_timeout=0")
    cursor.close()


_SQLITE_BUSY_CODES = {sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED}
_MISS = object()


def _busy(exc: OperationalError | sqlite3.OperationalError) -> bool:
    error = exc.orig if isinstance(exc, OperationalError) else exc
    return getattr(error, "sqlite_errorcode", None) in _SQLITE_BUSY_CODES


DATABASE_UNAVAILABLE = "database unavailable"


def database_errors() -> tuple[type[Exception], ...]:
    """The exception classes a database call may raise (SQLAlchemy's and the drivers'), for a handler
    that sorts them with :func:`database_unavailable`."""
    errors: tuple[type[Exception], ...] = (DBAPIError, SqlAlchemyTimeout, sqlite3.Error)
    try:
        import psycopg
    except ImportError:  # pragma: no cover - psycopg is a default dependency
        return errors
    return (*errors, psycopg.Error)


def database_unavailable(exc: BaseException) -> bool:
    """Whether ``exc`` says the database cannot be reached or used right now, so the same request may
    succeed in a few seconds: PostgreSQL's operational errors (connection refused or lost, the server
    shutting down or restarting), a connection pool exhausted, SQLite busy past its timeout. Not a bad
    statement, a missing table or a constraint. Its text (which names the host and port) is for logs only."""
    if isinstance(exc, SqlAlchemyTimeout):
        return True
    error = exc.orig if isinstance(exc, DBAPIError) else exc
    if isinstance(error, sqlite3.OperationalError):
        return getattr(error, "sqlite_errorcode", None) in _SQLITE_BUSY_CODES
    try:
        import psycopg
    except ImportError:  # pragma: no cover - psycopg is a default dependency
        return False
    return isinstance(error, psycopg.OperationalError)


def quiet_driver_debug() -> None:
    """aiosqlite's DEBUG lines print each call with its arguments (the SQL parameters: password and
    token hashes); keep its logger at INFO or above whatever the root level is."""
    driver = logging.getLogger("aiosqlite")
    if driver.getEffectiveLevel() < logging.INFO:
        driver.setLevel(logging.INFO)


class Database:
    """Owns the engine and the session factory. One per process, built from settings and passed down."""

    def __init__(self, url: str, *, echo: bool = False) -> None:
        self.url = normalize_database_url(url)
        self.dialect = make_url(self.url).get_backend_name()
        # SQL parameters carry password and token hashes: never in a log line, whatever the log level
        # (with the root logger at DEBUG, SQLAlchemy logs every statement even without ``echo``)
        kwargs: dict[str, Any] = {"echo": echo, "hide_parameters": True}
        if self.dialect == "sqlite":
            kwargs["connect_args"] = {"timeout": 30}
        else:
            kwargs["pool_pre_ping"] = True
            kwargs["connect_args"] = {"connect_timeout": 5}
        try:
            self.engine: AsyncEngine = create_async_engine(self.url, **kwargs)
        except ModuleNotFoundError as exc:  # an install without the driver (it is a default dependency)
            raise ConfigError(
                f"FATHOM_DATABASE_URL uses {self.dialect} but its driver is missing ({exc}); "
                "reinstall Fathom (`pip install -e .` installs psycopg) or `pip install 'psycopg[binary]'`."
            ) from None
        if self.dialect == "sqlite":
            event.listen(self.engine.sync_engine, "connect", _sqlite_pragmas)
            quiet_driver_debug()
        # PostgreSQL's hot read path: plain autocommit psycopg connections (``fathom.store.pg_reads``)
        self._pg_reader: PostgresReader | None = None
        if self.is_postgres:
            from fathom.store.pg_reads import PostgresReader

            self._pg_reader = PostgresReader(self.url)
        self.sessions = async_sessionmaker(self.engine, expire_on_commit=False)
        database = make_url(self.url).database or ""
        file_backed = (
            self.dialect == "sqlite" and database not in {"", ":memory:"} and "mode=memory" not in self.url
        )
        self._reader_path = database if file_backed else None
        self._reader_local = threading.local()
        self._reader_connections: list[sqlite3.Connection] = []
        self._reader_lock = threading.Lock()
        # the hot path on a SQLite file: a synchronous engine whose statements run together on a worker
        # thread (one thread hop per batch, instead of aiosqlite's hop per cursor call)
        self._sync_engine: Engine | None = None
        self._inline_engine: Engine | None = None
        self._inline_local = threading.local()
        self._inline_connections: list[Connection] = []
        self._writer_lock = threading.Lock()
        if file_backed:
            self._sync_engine = create_engine(
                f"sqlite:///{database}",
                echo=echo,
                hide_parameters=True,
                connect_args={"timeout": 30, "check_same_thread": False, "isolation_level": None},
            )
            event.listen(self._sync_engine, "connect", _sqlite_pragmas)
            # the same small batches on the event loop's thread when SQLite can take them at once
            self._inline_engine = create_engine(
                f"sqlite:///{database}",
                echo=echo,
                hide_parameters=True,
                connect_args={"timeout": 0, "check_same_thread": False, "isolation_level": None},
            )
            event.listen(self._inline_engine, "connect", _inline_pragmas)

    @property
    def is_postgres(self) -> bool:
        return self.dialect == "postgresql"

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncSession]:
        """A session inside one transaction: committed on success, rolled back on any exception."""
        async with self.sessions() as session, session.begin():
            yield session

    async def run_read(self, work: Callable[[Connection], T], *, snapshot: bool = False) -> T:
        """``work(connection)`` for a small batch of reads (``snapshot``: all in one snapshot, for more
        than one statement). On a SQLite file it runs on the event loop's thread when the database can
        be read at once (a WAL reader does not wait on writers), else on a worker thread in one hop;
        elsewhere on one pooled connection of the async engine (psycopg: no thread hops at all)."""
        if self._sync_engine is not None:
            return await self._run_on_file(work, "BEGIN" if snapshot else None)
        async with self.engine.connect() as conn:
            return await conn.run_sync(work)

    async def run_write(self, work: Callable[[Connection], T]) -> T:
        """``work(connection)`` as one transaction, committed when it returns, rolled back if it raises:
        the hot path's small batches (a chat turn, usage counters), one round trip per statement batch.

        On a SQLite file the transaction (``BEGIN IMMEDIATE`` … ``COMMIT``) runs on the event loop's
        thread when no other writer holds the database (SQLite answers at once, microseconds a
        statement: cheaper than a thread hop); when one does, it runs on a worker thread in one hop,
        writers of this process queued on a lock rather than on SQLite's busy timeout. Elsewhere it
        runs on one connection of the async engine inside ``BEGIN`` … ``COMMIT``."""
        if self._sync_engine is not None:
            return await self._run_on_file(work, "BEGIN IMMEDIATE")
        async with self.engine.begin() as conn:
            return await conn.run_sync(work)

    async def _run_on_file(self, work: Callable[[Connection], T], begin: str | None) -> T:
        """A SQLite file's batch: on the event loop's thread if SQLite takes it at once, else in one hop
        to a worker thread."""
        done = self._run_inline(work, begin)
        if done is not _MISS:
            return done  # type: ignore[return-value]
        return await asyncio.to_thread(self._run_sqlite, work, begin)

    def _run_inline(self, work: Callable[[Connection], T], begin: str | None) -> T | object:
        """``work`` on the event loop's thread, or ``_MISS`` (nothing done, nothing kept) when SQLite or
        this process's writer lock would make it wait."""
        writing = begin == "BEGIN IMMEDIATE"
        if writing and not self._writer_lock.acquire(blocking=False):
            return _MISS
        conn = self._loop_connection()
        try:
            result = self._transact(conn, work, begin)
        except BaseException as exc:
            self._inline_local.connection = None  # a fresh connection for the next batch
            with self._reader_lock:
                self._inline_connections.remove(conn)
            conn.close()
            if isinstance(exc, (OperationalError, sqlite3.OperationalError)) and _busy(exc):
                return _MISS  # rolled back (or never begun): the worker thread runs it again
            raise
        finally:
            if writing:
                self._writer_lock.release()
        return result

    def _loop_connection(self) -> Connection:
        """This thread's own connection for inline batches, kept open between them (a batch runs
        without awaiting, so no two share it): no pool check-out and reset per batch."""
        conn: Connection | None = getattr(self._inline_local, "connection", None)
        if conn is None or conn.closed:
            assert self._inline_engine is not None
            conn = self._inline_engine.connect()
            self._inline_local.connection = conn
            with self._reader_lock:
                self._inline_connections.append(conn)
        return conn

    def _run_sqlite(self, work: Callable[[Connection], T], begin: str | None) -> T:
        assert self._sync_engine is not None
        writing = begin == "BEGIN IMMEDIATE"
        if writing:
            self._writer_lock.acquire()
        try:
            with self._sync_engine.connect() as conn:
                return self._transact(conn, work, begin)
        finally:
            if writing:
                self._writer_lock.release()

    @staticmethod
    def _transact(conn: Connection, work: Callable[[Connection], T], begin: str | None) -> T:
        if begin is None:  # one statement: its own snapshot
            return work(conn)
        # the transaction's bounds straight on the driver's connection (autocommit mode: SQLAlchemy
        # keeps no transaction state of its own here), two statement executions fewer per batch
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

    async def ping(self) -> None:
        """Raise if the database cannot be reached."""
        async with self.engine.connect() as conn:
            await conn.execute(text("SELECT 1"))

    async def read(self, sql: str, params: Mapping[str, Any] | None = None) -> list[Sequence[Any]]:
        """Rows of one read-only statement with ``:name`` parameters: the hot path of searches.

        On a SQLite file the statement runs on a stdlib ``sqlite3`` connection of a worker thread (one per
        thread, ``query_only``) in a single thread hop, instead of aiosqlite's hop per cursor call, which
        costs milliseconds on a busy machine. Values come back as the driver gives them (SQLite: dates are
        text). On PostgreSQL it runs on a plain autocommit psycopg connection kept open between reads, in
        one round trip (``fathom.store.pg_reads``). Elsewhere (SQLite in memory) it runs on the engine."""
        return (await self.read_many([(sql, params or {})]))[0]

    async def read_many(
        self, statements: Sequence[tuple[str, Mapping[str, Any]]]
    ) -> list[list[Sequence[Any]]]:
        """``read`` for several statements at once (on SQLite in the same single thread hop and snapshot,
        on PostgreSQL sent together in pipeline mode, each statement in its own snapshot)."""
        if self._pg_reader is not None:
            return await self._pg_reader.read_many(statements)  # type: ignore[return-value]
        if self._reader_path is None:
            async with self.engine.connect() as conn:
                return [
                    [tuple(row) for row in await conn.execute(text(sql), dict(params))]
                    for sql, params in statements
                ]
        return await asyncio.to_thread(self._read_sqlite, [(sql, dict(params)) for sql, params in statements])

    def _read_sqlite(self, statements: list[tuple[str, dict[str, Any]]]) -> list[list[Sequence[Any]]]:
        connection: sqlite3.Connection | None = getattr(self._reader_local, "connection", None)
        if connection is None:
            connection = sqlite3.connect(self._reader_path or "", timeout=30, check_same_thread=False)
            connection.execute("PRAGMA query_only=ON")
            self._reader_local.connection = connection
            with self._reader_lock:
                self._reader_connections.append(connection)
        connection.execute("BEGIN")  # one snapshot for all the statements
        try:
            return [connection.execute(sql, params).fetchall() for sql, params in statements]
        finally:
            connection.execute("COMMIT")

    async def close(self) -> None:
        with self._reader_lock:
            for connection in self._reader_connections:
                connection.close()
            self._reader_connections.clear()
            for conn in self._inline_connections:
                conn.close()
            self._inline_connections.clear()
        self._inline_local = threading.local()
        self._reader_local = threading.local()
        if self._inline_engine is not None:
            self._inline_engine.dispose()
        if self._pg_reader is not None:
            await self._pg_reader.close()
        if self._sync_engine is not None:
            self._sync_engine.dispose()
        await self.engine.dispose()

    def describe(self) -> str:
        """The URL with any password masked, for logs and ``fathom doctor``."""
        return make_url(self.url).render_as_string(hide_password=True)
