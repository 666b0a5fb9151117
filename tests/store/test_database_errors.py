"""A database error is sorted without the caller importing SQLAlchemy (``fathom.store.errors``): a locked
SQLite file is an outage (retry in a few seconds), a broken constraint or a missing table is a database
error but not an outage, and anything else is neither. The errors are real: raised by a real SQLite file
through the engine, which wraps the driver's error."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import text

from fathom.store.db import Database
from fathom.store.errors import database_errors, database_unavailable, is_database_error


@pytest.fixture
async def database(tmp_path: Path) -> AsyncIterator[Database]:
    db = Database(f"sqlite:///{tmp_path / 'fathom.db'}")
    async with db.transaction() as session:
        await session.execute(text("CREATE TABLE note (id INTEGER PRIMARY KEY)"))
        await session.execute(text("INSERT INTO note (id) VALUES (1)"))
    yield db
    await db.close()


async def _raised(db: Database, sql: str) -> Exception:
    with pytest.raises(database_errors()) as caught:
        async with db.transaction() as session:
            await session.execute(text(sql))
    return caught.value


async def test_a_locked_database_is_an_outage(database: Database, tmp_path: Path) -> None:
    holder = sqlite3.connect(tmp_path / "fathom.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process holds the file
    try:
        locked = Database(f"sqlite:///{tmp_path / 'fathom.db'}")
        # a write that cannot wait: SQLite answers "database is locked" at once
        async with locked.engine.connect() as conn:
            await conn.exec_driver_sql("PRAGMA busy_timeout=0")
            with pytest.raises(database_errors()) as caught:
                await conn.execute(text("INSERT INTO note (id) VALUES (2)"))
        await locked.close()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert database_unavailable(caught.value)
    assert is_database_error(caught.value)


async def test_a_broken_constraint_is_a_database_error_not_an_outage(database: Database) -> None:
    error = await _raised(database, "INSERT INTO note (id) VALUES (1)")
    assert is_database_error(error)
    assert not database_unavailable(error)


async def test_a_missing_table_is_a_database_error_not_an_outage(database: Database) -> None:
    error = await _raised(database, "SELECT * FROM no_such_table")
    assert is_database_error(error)
    assert not database_unavailable(error)


def test_an_error_of_another_kind_is_neither() -> None:
    error = ValueError("not from a database")
    assert not is_database_error(error)
    assert not database_unavailable(error)
