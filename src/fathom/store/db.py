"""The database handle: an async engine for SQLite (aiosqlite) or PostgreSQL (psycopg 3)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

from fathom.config import ConfigError


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


class Database:
    """Owns the engine and the session factory. One per process, built from settings and passed down."""

    def __init__(self, url: str, *, echo: bool = False) -> None:
        self.url = normalize_database_url(url)
        self.dialect = make_url(self.url).get_backend_name()
        kwargs: dict[str, Any] = {"echo": echo}
        if self.dialect == "sqlite":
            kwargs["connect_args"] = {"timeout": 30}
        else:
            kwargs["pool_pre_ping"] = True
            kwargs["connect_args"] = {"connect_timeout": 5}
        self.engine: AsyncEngine = create_async_engine(self.url, **kwargs)
        if self.dialect == "sqlite":
            event.listen(self.engine.sync_engine, "connect", _sqlite_pragmas)
        self.sessions = async_sessionmaker(self.engine, expire_on_commit=False)

    @property
    def is_postgres(self) -> bool:
        return self.dialect == "postgresql"

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncSession]:
        """A session inside one transaction: committed on success, rolled back on any exception."""
        async with self.sessions() as session, session.begin():
            yield session

    async def ping(self) -> None:
        """Raise if the database cannot be reached."""
        async with self.engine.connect() as conn:
            await conn.execute(text("SELECT 1"))

    async def close(self) -> None:
        await self.engine.dispose()

    def describe(self) -> str:
        """The URL with any password masked, for logs and ``fathom doctor``."""
        return make_url(self.url).render_as_string(hide_password=True)
