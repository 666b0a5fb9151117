"""Re-embedding a knowledge base with another model: staged index rows, then one switch.

A dataset's searchable vectors are the index rows whose ``model`` is the dataset's ``vector_model``. While
a re-embed runs, rows for the new model are written beside the old ones ("staged"): searches, chunk
listings and the in-memory matrices ignore them, so search keeps working on the old vectors. When every
chunk has its new rows, one transaction deletes the old rows, sets ``vector_model`` and bumps the index
version. Staging is per chunk and transactional, so a run that is retried resumes where it stopped.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from fathom.store.db import Database
from fathom.store.knowledge.datasets import bump_index_version
from fathom.store.knowledge.index_rows import index_row, insert_index_rows
from fathom.store.models import DataChunk, DataIndex, Dataset


@dataclass(frozen=True)
class IndexToReembed:
    """One searchable index row of a chunk, to be embedded again with the new model."""

    data_id: str
    team_id: str
    collection_id: str
    type: str
    text: str


class SqlReembedRepository:
    def __init__(self, db: Database) -> None:
        self.db = db
        self._hnsw_dims: set[int] = set()

    async def drop_other_models(self, dataset_id: str, keep: set[str]) -> int:
        """Delete the dataset's index rows of models not in ``keep`` (leftovers of an abandoned switch)."""
        async with self.db.transaction() as session:
            result = await session.execute(
                delete(DataIndex).where(DataIndex.dataset_id == dataset_id, DataIndex.model.not_in(keep))
            )
            return int(result.rowcount)  # type: ignore[attr-defined]

    async def count_unstaged(self, dataset_id: str, target_model: str) -> int:
        """Chunks of the dataset that have no index row of ``target_model`` yet."""
        async with self.db.sessions() as session:
            return await self._count_unstaged(session, dataset_id, target_model)

    async def _count_unstaged(self, session: AsyncSession, dataset_id: str, target_model: str) -> int:
        staged = select(DataIndex.data_id).where(
            DataIndex.dataset_id == dataset_id, DataIndex.model == target_model
        )
        return int(
            await session.scalar(
                select(func.count())
                .select_from(DataChunk)
                .where(DataChunk.dataset_id == dataset_id, DataChunk.id.not_in(staged))
            )
            or 0
        )

    async def next_batch(
        self, dataset_id: str, source_model: str, target_model: str, chunks: int
    ) -> dict[str, list[IndexToReembed]]:
        """Up to ``chunks`` chunks without rows of ``target_model``, each with its ``source_model`` index
        rows (a chunk that has none yet is re-embedded from its text, as ingestion would)."""
        staged = select(DataIndex.data_id).where(
            DataIndex.dataset_id == dataset_id, DataIndex.model == target_model
        )
        async with self.db.sessions() as session:
            rows = (
                await session.execute(
                    select(DataChunk.id, DataChunk.team_id, DataChunk.collection_id, DataChunk.q, DataChunk.a)
                    .where(DataChunk.dataset_id == dataset_id, DataChunk.id.not_in(staged))
                    .order_by(DataChunk.id)
                    .limit(chunks)
                )
            ).all()
            ids = [row[0] for row in rows]
            indexes = (
                await session.execute(
                    select(DataIndex.data_id, DataIndex.type, DataIndex.text)
                    .where(DataIndex.data_id.in_(ids), DataIndex.model == source_model)
                    .order_by(DataIndex.data_id, DataIndex.id)
                )
            ).all()
        found: dict[str, list[IndexToReembed]] = {data_id: [] for data_id in ids}
        by_id = {row[0]: row for row in rows}
        for data_id, type_, index_text in indexes:
            chunk = by_id[data_id]
            found[data_id].append(IndexToReembed(data_id, chunk[1], chunk[2], type_, index_text))
        for data_id, chunk in by_id.items():
            if not found[data_id]:
                body = f"{chunk[3]}\n{chunk[4]}".strip() if chunk[4] else chunk[3]
                found[data_id].append(IndexToReembed(data_id, chunk[1], chunk[2], "default", body))
        return found

    async def stage(
        self, dataset_id: str, rows: list[tuple[IndexToReembed, list[float]]], target_model: str
    ) -> None:
        """Write new-model index rows for whole chunks in one transaction (replacing any earlier ones)."""
        if not rows:
            return
        values = [
            index_row(
                team_id=index.team_id,
                dataset_id=dataset_id,
                collection_id=index.collection_id,
                data_id=index.data_id,
                text=index.text,
                model=target_model,
                vector=vector,
                is_postgres=self.db.is_postgres,
                type_=index.type,
            )
            for index, vector in rows
        ]
        data_ids = sorted({index.data_id for index, _ in rows})
        async with self.db.transaction() as session:
            existing = set(await session.scalars(select(DataChunk.id).where(DataChunk.id.in_(data_ids))))
            values = [v for v in values if v["data_id"] in existing]  # chunks deleted meanwhile
            await session.execute(
                delete(DataIndex).where(DataIndex.data_id.in_(data_ids), DataIndex.model == target_model)
            )
            await insert_index_rows(session, self.db.is_postgres, values, self._hnsw_dims)

    async def switch(self, dataset_id: str, source_model: str, target_model: str) -> bool:
        """If every chunk has its ``target_model`` rows: drop the other rows and make ``target_model`` the
        dataset's model, in one transaction. False (nothing changed) while some chunk still lacks them."""
        async with self.db.transaction() as session:
            dataset = await session.get(Dataset, dataset_id)
            if dataset is None or dataset.vector_model != source_model:
                return False
            if await self._count_unstaged(session, dataset_id, target_model):
                return False
            await session.execute(
                delete(DataIndex).where(DataIndex.dataset_id == dataset_id, DataIndex.model != target_model)
            )
            await session.execute(
                update(Dataset).where(Dataset.id == dataset_id).values(vector_model=target_model)
            )
            await bump_index_version(session, [dataset_id])
            return True
