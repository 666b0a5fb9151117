"""Schema migrations with Alembic, run on server start and by ``fathom db upgrade``.

Replicas started together on one database (a scale-out's first start, a rolling upgrade that ships a
migration) take turns through :func:`schema_lock`: a PostgreSQL advisory lock, or on SQLite an exclusive
lock on a file next to the database, so exactly one migrates and the others find the schema current.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import make_url, text

from fathom.store.db import Database

MIGRATIONS_DIR = Path(__file__).parent / "migrations"


def _config(connection: Any = None) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def head_revision() -> str | None:
    """The newest migration shipped with this version of Fathom."""
    return ScriptDirectory.from_config(_config()).get_current_head()


async def current_revision(db: Database) -> str | None:
    """The migration the database is at (None for an empty database)."""

    def read(sync_conn: Any) -> str | None:
        return MigrationContext.configure(sync_conn).get_current_revision()

    async with db.engine.connect() as conn:
        return await conn.run_sync(read)


# pg_advisory_lock's key for schema changes (any fixed bigint; advisory locks are per database)
SCHEMA_LOCK_KEY = 0x6661_7468_6F6D  # "fathom"


@contextlib.asynccontextmanager
async def schema_lock(db: Database) -> AsyncIterator[None]:
    """Hold the database's schema lock (waiting for another process that holds it): what runs inside —
    migrating, creating the root team and admin key on first start — runs in one process at a time."""
    if db.is_postgres:
        async with db.engine.connect() as conn:
            conn = await conn.execution_options(isolation_level="AUTOCOMMIT")
            await conn.execute(text("SELECT pg_advisory_lock(:key)"), {"key": SCHEMA_LOCK_KEY})
            try:
                yield
            finally:  # a dropped connection releases it as well
                with contextlib.suppress(Exception):
                    await conn.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": SCHEMA_LOCK_KEY})
        return
    path = make_url(db.url).database or ""
    if db.dialect != "sqlite" or path in {"", ":memory:"} or "mode=memory" in db.url:
        yield  # a private in-memory database: no other process can see it
        return
    import fcntl

    fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        await asyncio.to_thread(fcntl.flock, fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


async def upgrade(db: Database, target: str = "head", *, locked: bool = False) -> str | None:
    """Bring the schema to the newest migration (or ``target``); returns the revision reached. Idempotent.
    Takes :func:`schema_lock` unless the caller holds it already (``locked``)."""

    def run(sync_conn: Any) -> None:
        command.upgrade(_config(sync_conn), target)

    async with contextlib.nullcontext() if locked else schema_lock(db), db.engine.begin() as conn:
        await conn.run_sync(run)
    return await current_revision(db)


async def is_current(db: Database) -> bool:
    return await current_revision(db) == head_revision()
