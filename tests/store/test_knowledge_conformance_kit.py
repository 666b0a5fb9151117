"""The knowledge domain's own conformance kit (``fathom.knowledge.conformance``) run against the SQL
index backends on SQLite and on PostgreSQL."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from fathom.knowledge.conformance import check_full_text_index, check_vector_index
from fathom.knowledge.ports import TextRecord, VectorRecord
from fathom.knowledge.tokenize import segment_for_index
from fathom.store import migrate
from fathom.store.db import Database
from fathom.store.knowledge import SqlFullTextIndex, SqlVectorIndex
from fathom.store.models import Collection, DataChunk, Dataset, Team


async def _rows_for(db: Database, records: Sequence[TextRecord | VectorRecord]) -> None:
    """The team, datasets, collections and chunk rows the records point at (foreign keys need them)."""
    async with db.transaction() as session:
        team = Team(name="kit")
        session.add(team)
        await session.flush()
        for dataset_id in sorted({r.dataset_id for r in records}):
            session.add(Dataset(id=dataset_id, team_id=team.id, name=dataset_id, vector_model="m"))
        await session.flush()
        for dataset_id, collection_id in sorted({(r.dataset_id, r.collection_id) for r in records}):
            session.add(
                Collection(
                    id=collection_id,
                    team_id=team.id,
                    dataset_id=dataset_id,
                    name=collection_id,
                    type="virtual",
                )
            )
        await session.flush()
        for record in {r.data_id: r for r in records}.values():
            session.add(
                DataChunk(
                    id=record.data_id,
                    team_id=team.id,
                    dataset_id=record.dataset_id,
                    collection_id=record.collection_id,
                    q=record.data_id,
                )
            )


async def test_sql_full_text_index_passes_the_domain_conformance_kit(database: Database) -> None:
    async def prepare(records: Sequence[TextRecord]) -> None:
        await _rows_for(database, records)

    await check_full_text_index(SqlFullTextIndex(database, segment_for_index), prepare=prepare)


async def test_sql_vector_index_passes_the_domain_conformance_kit(database: Database) -> None:
    async def prepare(records: Sequence[VectorRecord]) -> None:
        await _rows_for(database, records)

    await check_vector_index(SqlVectorIndex(database), prepare=prepare)


async def test_sqlite_int8_scan_with_float32_rescoring_passes_the_conformance_kit(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path / 'quantized.db'}")
    try:
        await migrate.upgrade(db)

        async def prepare(records: Sequence[VectorRecord]) -> None:
            await _rows_for(db, records)

        await check_vector_index(SqlVectorIndex(db, quantized_min_rows=0), prepare=prepare)
    finally:
        await db.close()
