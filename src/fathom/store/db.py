"""The database handle: one per process, built from settings and passed down.

It owns the async SQLAlchemy engine (aiosqlite or psycopg 3) and sends each kind of call down the
access path measured cheapest for it (``docs/architecture.md``, "Access paths"):

- ``transaction()`` / ``sessions``: the ORM on the async engine, for everything that is not hot
  (accounts, apps, datasets, jobs, files, migrations' checks), on both backends.
- ``run_read`` / ``run_write``: small batches of Core statements on the chat hot path. On a SQLite file
  :class:`~fathom.store.sqlite_batches.SqliteFileBatches` (inline on the event loop's thread, else one hop
  to a worker thread); elsewhere one connection of the async engine (psycopg: no thread hops at all).
- ``read`` / ``read_many``: read-only statements of searches. On a SQLite file
  :class:`~fathom.store.sqlite_reads.SqliteReader` (stdlib ``sqlite3`` on worker threads), on PostgreSQL
  :class:`~fathom.store.pg_reads.PostgresReader` (autocommit psycopg connections), elsewhere (SQLite in
  memory, tests) the async engine.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import Connection, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError
from sqlalchemy.exc import TimeoutError as SqlAlchemyTimeout
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

from fathom import json_text
from fathom.config import ConfigError
from fathom.store.errors import register_engine_errors, sqlite_busy
from fathom.store.pg_checkout import CHECKS_SOCKETS, discard_dead_connection
from fathom.store.sqlite_batches import SNAPSHOT, WRITE, SqliteFileBatches, apply_sqlite_pragmas
from fathom.store.sqlite_reads import SqliteReader

if TYPE_CHECKING:
    from fathom.store.pg_reads import PostgresReader

T = TypeVar("T")
_PING_BUSY_SECONDS = 5.0  # see Database.ping

register_engine_errors(DBAPIError, SqlAlchemyTimeout)


def _normalize_database_url(url: str) -> str:
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


def _quiet_driver_debug() -> None:
    """aiosqlite's DEBUG lines print each call with its arguments (the SQL parameters: password and
    token hashes); keep its logger at INFO or above whatever the root level is."""
    driver = logging.getLogger("aiosqlite")
    if driver.getEffectiveLevel() < logging.INFO:
        driver.setLevel(logging.INFO)


class Database:
    """Owns the engine, the session factory and the hot paths' connections (see the module doc)."""

    def __init__(self, url: str, *, echo: bool = False) -> None:
        self.url = _normalize_database_url(url)
        self.dialect = make_url(self.url).get_backend_name()
        # SQL parameters carry password and token hashes: never in a log line, whatever the log level
        # (with the root logger at DEBUG, SQLAlchemy logs every statement even without ``echo``)
        kwargs: dict[str, Any] = {"echo": echo, "hide_parameters": True}
        # JSON columns in the compact form, by orjson (a chat's stored node responses: 100 KB with quotes)
        kwargs.update(json_serializer=json_text.dumps, json_deserializer=json_text.loads)
        if self.dialect == "sqlite":
            kwargs["connect_args"] = {"timeout": 30}
        else:  # a dead pooled connection is found without pool_pre_ping's round trip where it can be
            kwargs["connect_args"] = {"connect_timeout": 5}
            kwargs["pool_pre_ping"] = not CHECKS_SOCKETS
        try:
            self.engine: AsyncEngine = create_async_engine(self.url, **kwargs)
        except ModuleNotFoundError as exc:  # an install without the driver (it is a default dependency)
            raise ConfigError(
                f"FATHOM_DATABASE_URL uses {self.dialect} but its driver is missing ({exc}); "
                "reinstall Fathom (`pip install -e .` installs psycopg) or `pip install 'psycopg[binary]'`."
            ) from None
        if self.dialect == "sqlite":
            event.listen(self.engine.sync_engine, "connect", apply_sqlite_pragmas)
            _quiet_driver_debug()
        elif CHECKS_SOCKETS:
            event.listen(self.engine.sync_engine.pool, "checkout", discard_dead_connection)
        self.sessions = async_sessionmaker(self.engine, expire_on_commit=False)
        # the access paths (module doc); None where the async engine serves the call instead
        self._pg_reader: PostgresReader | None = None
        if self.is_postgres:
            from fathom.store.pg_reads import PostgresReader

            self._pg_reader = PostgresReader(self.url)
        database = make_url(self.url).database or ""
        file_backed = (
            self.dialect == "sqlite" and database not in {"", ":memory:"} and "mode=memory" not in self.url
        )
        self.sqlite_batches = SqliteFileBatches(database, echo=echo) if file_backed else None
        self._sqlite_reader = SqliteReader(database) if file_backed else None

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
        than one statement), on the hot path (module doc)."""
        if self.sqlite_batches is not None:
            return await self.sqlite_batches.run(work, SNAPSHOT if snapshot else None)
        if not snapshot and self.is_postgres:
            return await self._autocommit(work)
        async with self.engine.connect() as conn:
            result = await conn.run_sync(work)
            await conn.commit()  # not the ROLLBACK of closing (see _autocommit)
            return result

    async def run_write(self, work: Callable[[Connection], T], *, one_statement: bool = False) -> T:
        """``work(connection)`` as one transaction, committed when it returns, rolled back if it raises:
        the hot path's small batches (a chat turn, usage counters), one round trip per statement batch.
        On a SQLite file ``BEGIN IMMEDIATE`` … ``COMMIT`` (module doc); elsewhere ``BEGIN`` … ``COMMIT``
        on one connection of the async engine. ``one_statement``: the caller knows ``work`` sends exactly
        one statement, atomic on its own, so PostgreSQL runs it in autocommit: one round trip instead of
        three (``BEGIN``, it, ``COMMIT``)."""
        if self.sqlite_batches is not None:
            return await self.sqlite_batches.run(work, WRITE)
        if one_statement and self.is_postgres:
            return await self._autocommit(work)
        async with self.engine.begin() as conn:
            return await conn.run_sync(work)

    async def _autocommit(self, work: Callable[[Connection], T]) -> T:
        """``work``'s one statement alone (PostgreSQL): one round trip instead of ``BEGIN``, it and
        ``COMMIT``, and never a transaction ended by the ``ROLLBACK`` of closing, at which psycopg forgets
        every statement it prepared on that connection (and sends ``DEALLOCATE ALL``): one such read a
        chat kept the hot path's statements from ever staying prepared."""
        async with self.engine.connect() as conn:
            await conn.execution_options(isolation_level="AUTOCOMMIT")
            return await conn.run_sync(work)

    async def ping(self) -> None:
        """Raise if the database cannot be reached. A SQLite file that processes started together are
        creating and switching to WAL at this instant can refuse a new connection at once ("database is
        locked", without waiting for the busy timeout: CI saw it with three platforms preparing one empty
        file): that is retried for up to ``_PING_BUSY_SECONDS``; any other error is raised at once."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _PING_BUSY_SECONDS
        while True:
            try:
                async with self.engine.connect() as conn:
                    await conn.execute(text("SELECT 1"))
                return
            except Exception as exc:
                if not sqlite_busy(exc) or loop.time() >= deadline:
                    raise
            await asyncio.sleep(0.05)

    async def analyze(self) -> None:
        """Refresh the query planner's statistics (``ANALYZE``, on both backends: the ``db.analyze``
        maintenance job)."""
        async with self.engine.begin() as conn:
            await conn.execute(text("ANALYZE"))

    async def read(self, sql: str, params: Mapping[str, Any] | None = None) -> list[Sequence[Any]]:
        """Rows of one read-only statement with ``:name`` parameters: the hot path of searches (module
        doc). Values come back as the driver gives them (SQLite: dates are text)."""
        return (await self.read_many([(sql, params or {})]))[0]

    async def read_many(
        self, statements: Sequence[tuple[str, Mapping[str, Any]]]
    ) -> list[list[Sequence[Any]]]:
        """``read`` for several statements at once (on SQLite in the same single thread hop and snapshot,
        on PostgreSQL sent together in pipeline mode, each statement in its own snapshot)."""
        if self._pg_reader is not None:
            return await self._pg_reader.read_many(statements)  # type: ignore[return-value]
        if self._sqlite_reader is not None:
            return await self._sqlite_reader.read_many(statements)
        async with self.engine.connect() as conn:
            return [
                [tuple(row) for row in await conn.execute(text(sql), dict(params))]
                for sql, params in statements
            ]

    async def close(self) -> None:
        if self._sqlite_reader is not None:
            self._sqlite_reader.close()
        if self.sqlite_batches is not None:
            self.sqlite_batches.close()
        if self._pg_reader is not None:
            await self._pg_reader.close()
        await self.engine.dispose()

    def describe(self) -> str:
        """The URL with any password masked, for logs and ``fathom doctor``."""
        return make_url(self.url).render_as_string(hide_password=True)
