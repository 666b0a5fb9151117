"""The hot path's bound-value writes sent straight to ``sqlite3`` on a SQLite file store what
SQLAlchemy's own execution stores (JSON text, naive UTC datetimes, booleans as integers, a constant of
the statement), count the rows they touch, and fail with the error SQLAlchemy raises."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    Connection,
    Float,
    MetaData,
    String,
    Table,
    bindparam,
    insert,
    select,
    update,
)
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.dialects.sqlite.pysqlite import SQLiteDialect_pysqlite
from sqlalchemy.exc import IntegrityError

from fathom.store.bound_statements import BoundStatement
from fathom.store.db import Database
from fathom.store.models import UTCDateTime

_META = MetaData()
_NOTES = Table(
    "notes",
    _META,
    Column("id", String(24), primary_key=True),
    Column("body", JSON, nullable=False),
    Column("flag", Boolean, nullable=False),
    Column("score", Float, nullable=True),
    Column("at", UTCDateTime(), nullable=True),
    Column("status", String(16), nullable=True),
)
_COLUMNS = ("id", "body", "flag", "score", "at", "status")
_INSERT = BoundStatement(insert(_NOTES), _COLUMNS)
_FINISH = BoundStatement(
    update(_NOTES)
    .where(_NOTES.c.id == bindparam("k_id"))
    .values(body=bindparam("n_body", type_=_NOTES.c.body.type), status=None, at=None),
    ("k_id", "n_body"),
)
_ROWS: list[dict[str, Any]] = [
    {
        "id": "a",
        "body": [{"type": "text", "text": {"content": "héllo \u2028"}}],
        "flag": True,
        "score": 0.25,
        "at": datetime(2026, 12, 6, 7, 8, 9, 123456, tzinfo=UTC),
        "status": "running",
    },
    {
        "id": "b",
        "body": {"k": None, "n": 1.5},
        "flag": False,
        "score": None,
        "at": datetime(2026, 12, 6, 9, 8, 9, tzinfo=timezone(timedelta(hours=2))),
        "status": None,
    },
]


async def _database(path: Path) -> Database:
    db = Database(f"sqlite:///{path}")
    assert db.sqlite_batches is not None
    _META.create_all(db.sqlite_batches.worker_engine)
    return db


def _stored(path: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as raw:
        columns = ", ".join(f"{name}, typeof({name})" for name in _COLUMNS)
        return raw.execute(f"SELECT {columns} FROM notes ORDER BY id").fetchall()


async def test_straight_to_sqlite_stores_what_sqlalchemy_stores(tmp_path: Path) -> None:
    fast, slow = await _database(tmp_path / "fast.db"), await _database(tmp_path / "slow.db")

    def by_driver(conn: Connection) -> int:
        _INSERT.execute(conn, _ROWS[0])
        _INSERT.execute(conn, [{**_ROWS[1], "id": "b"}, {**_ROWS[1], "id": "c"}])
        return int(_FINISH.execute(conn, {"k_id": "a", "n_body": ["done"]}).rowcount)

    def by_sqlalchemy(conn: Connection) -> int:
        conn.execute(_INSERT.statement, _ROWS[0])
        conn.execute(_INSERT.statement, [{**_ROWS[1], "id": "b"}, {**_ROWS[1], "id": "c"}])
        return int(conn.execute(_FINISH.statement, {"k_id": "a", "n_body": ["done"]}).rowcount)

    try:
        assert await fast.run_write(by_driver) == 1
        assert await slow.run_write(by_sqlalchemy) == 1
        assert (
            await fast.run_write(lambda conn: _FINISH.execute(conn, {"k_id": "x", "n_body": []}).rowcount)
            == 0
        )
    finally:
        await fast.close()
        await slow.close()
    stored = _stored(tmp_path / "fast.db")
    assert stored == _stored(tmp_path / "slow.db")
    assert [row[0] for row in stored] == ["a", "b", "c"]
    assert stored[0][8:12] == (None, "null", None, "null")  # the finished row: time and status cleared
    assert stored[1][8] == "2026-12-06 07:08:09.000000"  # +02:00 stored as naive UTC


_READ = BoundStatement(select(_NOTES).where(_NOTES.c.id == bindparam("k_id")), ("k_id",))


async def test_a_row_read_straight_from_sqlite_is_the_row_sqlalchemy_reads(tmp_path: Path) -> None:
    db = await _database(tmp_path / "fast.db")

    def both(conn: Connection) -> list[tuple[Any, Any]]:
        _INSERT.execute(conn, _ROWS)
        return [
            (_READ.first(conn, {"k_id": key}), conn.execute(_READ.statement, {"k_id": key}).first())
            for key in ("a", "b", "nobody")
        ]

    try:
        read = await db.run_write(both)
    finally:
        await db.close()
    assert [tuple(fast) if fast is not None else None for fast, _ in read] == [
        tuple(slow) if slow is not None else None for _, slow in read
    ]
    first = read[0][0]
    assert first.body == _ROWS[0]["body"] and first.flag is True and first.status == "running"
    assert first.at == _ROWS[0]["at"] and first.at.tzinfo is UTC
    assert read[1][0].at == _ROWS[1]["at"] and read[2][0] is None


_UPSERT_STATEMENT = sqlite_insert(_NOTES)
_UPSERT = BoundStatement(
    _UPSERT_STATEMENT.on_conflict_do_update(
        index_elements=["id"],
        set_={"body": _UPSERT_STATEMENT.excluded.body},
        where=_NOTES.c.status.is_not_distinct_from(bindparam("o_status", type_=_NOTES.c.status.type)),
    ).returning(_NOTES.c.id, _NOTES.c.body),
    (*_COLUMNS, "o_status"),
)


async def test_a_returning_row_read_straight_from_sqlite_is_the_row_sqlalchemy_reads(tmp_path: Path) -> None:
    """An upsert whose update only some callers may make: the row it wrote comes back, none when the
    condition refused the update (what the chat's first turn under a chosen chatId relies on)."""
    db = await _database(tmp_path / "fast.db")

    def both(conn: Connection) -> list[tuple[Any, Any]]:
        runs = [
            ({**_ROWS[0], "o_status": None}, {**_ROWS[0], "body": ["again"], "o_status": "running"}),
            ({**_ROWS[0], "body": ["refused"], "o_status": "other"}, {**_ROWS[0], "o_status": None}),
        ]
        read = []
        for fast, slow in runs:
            read.append((_UPSERT.first(conn, fast), conn.execute(_UPSERT.statement, slow).first()))
        return read

    try:
        read = await db.run_write(both)
    finally:
        await db.close()
    assert [(tuple(fast) if fast else None, tuple(slow) if slow else None) for fast, slow in read] == [
        (("a", _ROWS[0]["body"]), ("a", ["again"])),
        (None, None),
    ]
    assert _stored(tmp_path / "fast.db")[0][2] == '["again"]'


async def test_a_driver_error_is_raised_as_sqlalchemy_raises_it_and_nothing_is_kept(tmp_path: Path) -> None:
    db = await _database(tmp_path / "fast.db")

    def twice(conn: Connection) -> None:
        _INSERT.execute(conn, _ROWS[0])
        _INSERT.execute(conn, _ROWS[0])

    try:
        with pytest.raises(IntegrityError) as raised:
            await db.run_write(twice)
        assert isinstance(raised.value.orig, sqlite3.IntegrityError)
        assert "héllo" not in str(raised.value)  # parameters are never shown
        await db.run_write(lambda conn: _INSERT.execute(conn, _ROWS[1]))
    finally:
        await db.close()
    assert [row[0] for row in _stored(tmp_path / "fast.db")] == ["b"]


def test_a_statement_that_needs_a_python_default_is_refused() -> None:
    table = Table(
        "dated", MetaData(), Column("id", String(8), primary_key=True), Column("n", Float, default=1.0)
    )
    statement = BoundStatement(insert(table), ("id",))
    with pytest.raises(ValueError, match="Python default"):
        statement._compile(SQLiteDialect_pysqlite())
