"""PostgreSQL: two writers that meet a new vector dimension at once both get its HNSW index, made once.

``CREATE INDEX IF NOT EXISTS`` alone failed here: the second transaction did not see the first's
uncommitted index and, once the first committed, hit the catalog's unique key ("duplicate key value
violates unique constraint pg_class_relname_nsp_index"): an ingestion job of a killed-worker test failed
on it (a worker and a finisher indexing the same new dimension)."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import text

from fathom.store.db import Database
from fathom.store.knowledge.index_rows import ensure_hnsw_index

DIMS = 7


async def _indexes(db: Database) -> list[str]:
    async with db.transaction() as session:
        rows = await session.execute(
            text("SELECT indexname FROM pg_indexes WHERE indexname = :name"),
            {"name": f"ix_data_indexes_hnsw_{DIMS}"},
        )
        return [str(row[0]) for row in rows]


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
async def test_a_second_writer_waits_for_the_firsts_new_index_instead_of_failing(database: Database) -> None:
    first_made_it = asyncio.Event()
    release = asyncio.Event()

    async def first() -> None:
        async with database.transaction() as session:
            await ensure_hnsw_index(session, DIMS)
            first_made_it.set()
            await release.wait()  # the index stays uncommitted while the second writer comes

    async def second() -> None:
        await first_made_it.wait()
        async with database.transaction() as session:
            await ensure_hnsw_index(session, DIMS)

    one = asyncio.create_task(first())
    two = asyncio.create_task(second())
    await first_made_it.wait()
    await asyncio.sleep(0.5)  # the second is now inside its transaction, waiting
    assert not two.done()
    release.set()
    await asyncio.wait_for(asyncio.gather(one, two), timeout=30)
    assert await _indexes(database) == [f"ix_data_indexes_hnsw_{DIMS}"]


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
async def test_an_existing_index_is_left_alone(database: Database) -> None:
    for _ in range(2):
        async with database.transaction() as session:
            await ensure_hnsw_index(session, DIMS)
    assert await _indexes(database) == [f"ix_data_indexes_hnsw_{DIMS}"]
