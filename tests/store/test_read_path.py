"""The database's read path (``Database.read`` / ``read_many``), which every search goes through: SQLite's
stdlib connections on a worker thread, PostgreSQL's plain autocommit psycopg connections."""

from __future__ import annotations

import asyncio

import pytest

from fathom.store.db import Database
from fathom.store.pg_embedded import EmbeddedPostgres
from fathom.store.pg_reads import PostgresReader, libpq_conninfo
from fathom.store.repositories import SqlTeamRepository


async def test_named_parameters_casts_and_percent_signs(database: Database) -> None:
    team = await SqlTeamRepository(database).create_team("Team 100%")
    name = "name" if database.dialect == "sqlite" else "name::text"  # a cast is no parameter
    rows = await database.read(
        f"SELECT {name}, CAST(:n AS INTEGER) + 1, 'a%b' FROM teams WHERE id = :id AND name LIKE '%100%%'",
        {"id": team.id, "n": "41"},
    )
    assert [tuple(row) for row in rows] == [("Team 100%", 42, "a%b")]


async def test_several_statements_answer_in_order(database: Database) -> None:
    teams = SqlTeamRepository(database)
    first, second = await teams.create_team("first"), await teams.create_team("second")
    answers = await database.read_many(
        [
            ("SELECT name FROM teams WHERE id = :a", {"a": first.id, "unused": 1}),
            ("SELECT name FROM teams WHERE id IN (:a, :b) ORDER BY name", {"a": first.id, "b": second.id}),
            ("SELECT name FROM teams WHERE id = :a", {"a": "missing"}),
        ]
    )
    assert [[row[0] for row in rows] for rows in answers] == [["first"], ["first", "second"], []]


async def test_an_error_names_the_statement_and_the_next_read_works(database: Database) -> None:
    with pytest.raises(Exception, match="no_such_table"):
        await database.read("SELECT * FROM no_such_table")
    assert [tuple(row) for row in await database.read("SELECT 1")] == [(1,)]


@pytest.mark.parametrize("backend", ["postgres"])
async def test_postgres_reuses_its_connection_and_survives_a_dropped_one(database: Database) -> None:
    reader = database._pg_reader
    assert isinstance(reader, PostgresReader)
    for _ in range(3):
        await database.read("SELECT 1")
    assert reader.connects == 1  # one connection, kept between reads
    (pid,) = (await database.read("SELECT pg_backend_pid()"))[0]
    killer = PostgresReader(database.url)
    await killer.read_many([("SELECT pg_terminate_backend(:pid, 5000)", {"pid": pid})])
    await killer.close()
    # the idle connection is gone: the read runs once more on a fresh one
    assert [tuple(row) for row in await database.read("SELECT 2")] == [(2,)]
    assert reader.connects == 2


def test_libpq_url_keeps_the_options_and_drops_the_driver_name() -> None:
    url = "postgresql+psycopg://user:p%40ss@db.example:5433/fathom?sslmode=require"
    assert libpq_conninfo(url) == "postgresql://user:p%40ss@db.example:5433/fathom?sslmode=require"


def test_postgres_connections_stay_with_their_event_loop(postgres_server: EmbeddedPostgres) -> None:
    database = Database(postgres_server.create_database("read_path_loops"))
    reader = database._pg_reader
    assert isinstance(reader, PostgresReader)

    async def read(value: int) -> list[tuple[object, ...]]:
        return [tuple(row) for row in await database.read("SELECT CAST(:v AS INTEGER)", {"v": value})]

    assert asyncio.run(read(1)) == [(1,)]
    # the first loop has ended: its idle connection is dropped, the second loop opens its own
    assert asyncio.run(read(2)) == [(2,)]
    assert reader.connects == 2

    async def read_and_close() -> list[tuple[object, ...]]:
        answer = await read(3)
        await database.close()
        return answer

    assert asyncio.run(read_and_close()) == [(3,)]
    assert reader.connects == 3
