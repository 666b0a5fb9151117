"""Chunks and their index rows: written (chunk row, full-text row, vectors) in one transaction."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from fathom.store.db import Database
from fathom.store.knowledge.datasets import bump_index_version
from fathom.store.knowledge.fulltext import delete_fulltext_rows, write_fulltext_rows
from fathom.store.knowledge.index_rows import ensure_hnsw_index, index_row, insert_index_rows
from fathom.store.knowledge.scope import in_list
from fathom.store.models import Collection, DataChunk, DataIndex, Dataset, TrainingItem, new_id, utcnow
from fathom.store.protocols import AlreadyTrained, ChunkRow, ChunkToWrite, NotFound

Segmenter = Callable[[str], str]


def _plain(text_: str) -> str:
    return text_.lower()


def _utc(value: datetime | str) -> datetime:
    """A stored timestamp as an aware UTC datetime (SQLite's raw rows hold naive UTC text)."""
    parsed = datetime.fromisoformat(value) if isinstance(value, str) else value
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


@dataclass(frozen=True)
class ChunkRows:
    """The rows a batch of chunks makes: chunk rows, index rows (with vectors) and full-text rows."""

    chunks: list[dict[str, Any]]
    indexes: list[dict[str, Any]]
    fulltext: list[dict[str, str]]


class SqlChunkRepository:
    """Writes and reads chunks; the ``segment`` function must be the one the full-text index queries with."""

    def __init__(self, db: Database, segment: Segmenter = _plain) -> None:
        self.db = db
        self.segment = segment
        self._hnsw_dims: set[int] = set()

    async def _write_fulltext(
        self, session: AsyncSession, chunk_id: str, dataset_id: str, collection_id: str, content: str
    ) -> None:
        row = {"d": chunk_id, "ds": dataset_id, "c": collection_id, "t": self.segment(content)}
        await write_fulltext_rows(session, self.db.is_postgres, [row], replace=True)

    async def _write_indexes(
        self,
        session: AsyncSession,
        row: DataChunk,
        texts: Sequence[str],
        vectors: Sequence[Sequence[float]],
        model: str,
        types: Sequence[str] = (),
    ) -> None:
        """``types``: each text's index type (FastGPT's ``default``, ``custom``…); missing: default."""
        if len(texts) != len(vectors):
            raise ValueError(f"chunk {row.chunk_index}: {len(texts)} index texts but {len(vectors)} vectors")
        rows = [
            index_row(
                team_id=row.team_id,
                dataset_id=row.dataset_id,
                collection_id=row.collection_id,
                data_id=row.id,
                text=index_text,
                model=model,
                vector=vector,
                is_postgres=self.db.is_postgres,
                type_=types[position] if position < len(types) else "default",
            )
            for position, (index_text, vector) in enumerate(zip(texts, vectors, strict=True))
        ]
        await insert_index_rows(session, self.db.is_postgres, rows, self._hnsw_dims)

    async def write_chunks(
        self,
        team_id: str,
        dataset_id: str,
        collection_id: str,
        chunks: Sequence[ChunkToWrite],
        *,
        model: str,
        training_item: str | None = None,
    ) -> list[str]:
        """Insert chunks with their index rows, vectors and full-text rows, and advance the collection's
        progress, all in one transaction: a crash leaves none of the batch behind. Rows go in as a few
        multi-row statements (one per table), not one statement per row.

        With ``training_item`` the chunks are what the model made of that training item: the item is
        deleted in the same transaction (its done-marker), and when it is gone already (another run wrote
        it) nothing is written and :class:`AlreadyTrained` is raised. The collection's remaining work
        (``chunks_total - chunks_done``) then drops by one item, whatever number of rows it made."""
        rows = self.chunk_rows(team_id, dataset_id, collection_id, chunks, model=model)
        progress: dict[str, Any] = {"chunks_done": Collection.chunks_done + len(chunks)}
        await self._ensure_vector_indexes([vector for chunk in chunks for vector in chunk.vectors])
        if training_item is not None:
            progress["chunks_total"] = Collection.chunks_total + len(chunks) - 1
        async with self.db.transaction() as session:
            if training_item is not None:
                claimed = await session.execute(
                    delete(TrainingItem).where(TrainingItem.id == training_item, TrainingItem.error.is_(None))
                )
                if getattr(claimed, "rowcount", 0) != 1:
                    raise AlreadyTrained(f"training item {training_item} was written by another run")
            await self.insert_chunk_rows(session, rows)
            await session.execute(
                update(Collection)
                .where(Collection.id == collection_id)
                .values(**progress, updated_at=utcnow())
            )
            await bump_index_version(session, [dataset_id])
        return [row["id"] for row in rows.chunks]

    async def _ensure_vector_indexes(self, vectors: Sequence[Sequence[float]]) -> None:
        """PostgreSQL: the HNSW index of each new dimension, in a transaction of its own, before the
        write that needs it: its lock is held only as long as the ``CREATE INDEX IF NOT EXISTS`` (in the
        write's transaction it would be held to the end, and concurrent writes that each took it and then
        insert into the table wait for each other: a deadlock)."""
        new = {len(vector) for vector in vectors} - self._hnsw_dims
        if not self.db.is_postgres or not new:
            return
        for dims in sorted(new):
            async with self.db.transaction() as session:
                await ensure_hnsw_index(session, dims)
            self._hnsw_dims.add(dims)

    async def add_trained_indexes(
        self,
        collection_id: str,
        chunk_index: int,
        texts: Sequence[str],
        vectors: Sequence[Sequence[float]],
        *,
        model: str,
        types: Sequence[str],
        training_item: str,
    ) -> None:
        """Add index rows (what the model made of ``training_item``: an image's description) to the chunk
        at ``chunk_index`` and delete the item, in one transaction; the collection's remaining work drops
        by one. :class:`AlreadyTrained` when the item is gone (another run wrote it), :class:`NotFound`
        when the chunk is (the item is kept)."""
        await self._ensure_vector_indexes(vectors)
        async with self.db.transaction() as session:
            row = await session.scalar(
                select(DataChunk)
                .where(DataChunk.collection_id == collection_id, DataChunk.chunk_index == chunk_index)
                .order_by(DataChunk.id)
                .limit(1)
            )
            if row is None:
                raise NotFound(f"chunk {chunk_index} of collection {collection_id} not found")
            claimed = await session.execute(
                delete(TrainingItem).where(TrainingItem.id == training_item, TrainingItem.error.is_(None))
            )
            if getattr(claimed, "rowcount", 0) != 1:
                raise AlreadyTrained(f"training item {training_item} was written by another run")
            await self._write_indexes(session, row, texts, vectors, model, types)
            row.updated_at = utcnow()
            await session.execute(
                update(Collection)
                .where(Collection.id == collection_id)
                .values(chunks_total=Collection.chunks_total - 1, updated_at=utcnow())
            )
            await bump_index_version(session, [row.dataset_id])

    def chunk_rows(
        self, team_id: str, dataset_id: str, collection_id: str, chunks: Sequence[ChunkToWrite], *, model: str
    ) -> ChunkRows:
        """The chunk, index and full-text rows of ``chunks`` (new ids), for :meth:`insert_chunk_rows`."""
        now = utcnow()
        rows = ChunkRows([], [], [])
        for chunk in chunks:
            if len(chunk.index_texts) != len(chunk.vectors):
                raise ValueError(
                    f"chunk {chunk.chunk_index}: {len(chunk.index_texts)} index texts "
                    f"but {len(chunk.vectors)} vectors"
                )
            data_id = new_id()
            rows.chunks.append(
                {
                    "id": data_id,
                    "team_id": team_id,
                    "dataset_id": dataset_id,
                    "collection_id": collection_id,
                    "chunk_index": chunk.chunk_index,
                    "q": chunk.q,
                    "a": chunk.a,
                    "tokens": chunk.tokens,
                    "created_at": now,
                    "updated_at": now,
                }
            )
            for position, (index_text, vector) in enumerate(
                zip(chunk.index_texts, chunk.vectors, strict=True)
            ):
                rows.indexes.append(
                    index_row(
                        team_id=team_id,
                        dataset_id=dataset_id,
                        collection_id=collection_id,
                        data_id=data_id,
                        text=index_text,
                        model=model,
                        vector=vector,
                        is_postgres=self.db.is_postgres,
                        type_=chunk.index_types[position] if position < len(chunk.index_types) else "default",
                    )
                )
            rows.fulltext.append(
                {
                    "d": data_id,
                    "ds": dataset_id,
                    "c": collection_id,
                    "t": self.segment(f"{chunk.q}\n{chunk.a}"),
                }
            )
        return rows

    async def insert_chunk_rows(self, session: AsyncSession, rows: ChunkRows) -> None:
        """Insert :meth:`chunk_rows`' rows inside the caller's transaction."""
        if rows.chunks:
            await session.execute(insert(DataChunk), rows.chunks)
        await insert_index_rows(session, self.db.is_postgres, rows.indexes, self._hnsw_dims)
        await write_fulltext_rows(session, self.db.is_postgres, rows.fulltext)

    async def update_chunk(
        self,
        team_id: str,
        data_id: str,
        *,
        q: str,
        a: str,
        index_texts: Sequence[str],
        vectors: Sequence[Sequence[float]],
        model: str,
        tokens: int | None = None,
        index_types: Sequence[str] = (),
    ) -> None:
        """Replace a chunk's text (and its token count), index rows (typed by ``index_types``, default
        when left out) and full-text row in one transaction."""
        async with self.db.transaction() as session:
            row = await session.get(DataChunk, data_id)
            if row is None or row.team_id != team_id:
                raise NotFound(f"data {data_id} not found")
            row.q, row.a, row.tokens, row.updated_at = q, a, tokens, utcnow()
            await session.execute(delete(DataIndex).where(DataIndex.data_id == data_id))
            await self._write_indexes(session, row, index_texts, vectors, model, index_types)
            await self._write_fulltext(session, row.id, row.dataset_id, row.collection_id, f"{q}\n{a}")
            await bump_index_version(session, [row.dataset_id])

    async def delete_chunk(self, team_id: str, data_id: str) -> None:
        """Remove a chunk from the chunk table and both indexes in one transaction."""
        async with self.db.transaction() as session:
            row = await session.get(DataChunk, data_id)
            if row is None or row.team_id != team_id:
                raise NotFound(f"data {data_id} not found")
            await delete_fulltext_rows(session, self.db.is_postgres, data_ids=[data_id])
            await session.execute(delete(DataIndex).where(DataIndex.data_id == data_id))
            await session.delete(row)
            await session.execute(
                update(Collection)
                .where(Collection.id == row.collection_id, Collection.chunks_done > 0)
                .values(chunks_done=Collection.chunks_done - 1, chunks_total=Collection.chunks_total - 1)
            )
            await bump_index_version(session, [row.dataset_id])

    async def get_many(self, data_ids: Sequence[str]) -> dict[str, ChunkRow]:
        """Chunk rows (with their collection's name as source) for the ids a search recalled."""
        if not data_ids:
            return {}
        if self.db.is_postgres:
            return await self._get_many_postgres(data_ids)
        params: dict[str, Any] = {}
        marks = in_list("i", set(data_ids), params)
        # plain statements on the database's read path, not ORM entities: this runs on every search
        rows, found = await self.db.read_many(
            [
                (
                    "SELECT c.id, c.dataset_id, c.collection_id, c.chunk_index, c.q, c.a, col.name, "
                    "c.updated_at, c.tokens FROM data_chunks c "
                    f"JOIN collections col ON col.id = c.collection_id WHERE c.id IN ({marks})",
                    params,
                ),
                (  # the current model's index rows (not those staged for a model switch)
                    "SELECT i.data_id, i.id, i.type, i.text FROM data_indexes i "
                    "JOIN datasets d ON d.id = i.dataset_id "
                    f"WHERE i.data_id IN ({marks}) AND i.model = d.vector_model",
                    params,
                ),
            ]
        )
        indexes: dict[str, list[dict[str, Any]]] = {}
        for data_id, index_id, type_, index_text in found:
            indexes.setdefault(data_id, []).append({"dataId": index_id, "type": type_, "text": index_text})
        # a batch's chunks share their timestamps: each distinct text parsed once (1.2 µs a parse)
        stamps = {text: _utc(text) for text in {row[7] for row in rows}}
        return {
            row[0]: ChunkRow(
                row[0],
                row[1],
                row[2],
                row[3],
                row[4],
                row[5],
                row[6],
                stamps[row[7]],
                indexes.get(row[0], []),
                None if row[8] is None else int(row[8]),
            )
            for row in rows
        }

    async def _get_many_postgres(self, data_ids: Sequence[str]) -> dict[str, ChunkRow]:
        """``get_many`` on PostgreSQL: one statement, the chunk rows joined to their current index rows (a
        chunk row repeats once per index row), with the ids as one array parameter, so the statement's
        text is the same for any number of ids (psycopg prepares it after a few searches)."""
        rows = await self.db.read(
            "SELECT c.id, c.dataset_id, c.collection_id, c.chunk_index, c.q, c.a, col.name, c.updated_at, "
            "c.tokens, i.id, i.type, i.text FROM data_chunks c "
            "JOIN collections col ON col.id = c.collection_id "
            # the current model's index rows (not those staged for a model switch)
            "LEFT JOIN (data_indexes i JOIN datasets d ON d.id = i.dataset_id AND i.model = d.vector_model) "
            "ON i.data_id = c.id WHERE c.id = ANY(:ids)",
            {"ids": list(dict.fromkeys(data_ids))},
        )
        found: dict[str, ChunkRow] = {}
        for row in rows:
            chunk = found.get(row[0])
            if chunk is None:
                tokens = None if row[8] is None else int(row[8])
                chunk = found[row[0]] = ChunkRow(
                    row[0], row[1], row[2], row[3], row[4], row[5], row[6], _utc(row[7]), [], tokens
                )
            if row[9] is not None:
                chunk.indexes.append({"dataId": row[9], "type": row[10], "text": row[11]})
        return found

    async def _indexes_of(
        self, session: AsyncSession, data_ids: list[str]
    ) -> dict[str, list[dict[str, Any]]]:
        result: dict[str, list[dict[str, Any]]] = {}
        if not data_ids:
            return result
        rows = await session.execute(  # the current model's rows (not those staged for a model switch)
            select(DataIndex.data_id, DataIndex.id, DataIndex.type, DataIndex.text)
            .join(Dataset, Dataset.id == DataIndex.dataset_id)
            .where(DataIndex.data_id.in_(data_ids), DataIndex.model == Dataset.vector_model)
        )
        for data_id, index_id, type_, index_text in rows:
            result.setdefault(data_id, []).append({"dataId": index_id, "type": type_, "text": index_text})
        return result

    async def written_chunk_indexes(self, collection_id: str) -> set[int]:
        """Chunk positions of a collection already written (by an earlier, interrupted run)."""
        async with self.db.sessions() as session:
            rows = await session.scalars(
                select(DataChunk.chunk_index).where(DataChunk.collection_id == collection_id)
            )
            return set(rows)

    async def list_chunks(
        self, team_id: str, collection_id: str, *, offset: int = 0, limit: int = 30, search: str = ""
    ) -> tuple[list[ChunkRow], int]:
        where = [DataChunk.team_id == team_id, DataChunk.collection_id == collection_id]
        if search:
            where.append(DataChunk.q.contains(search) | DataChunk.a.contains(search))
        async with self.db.sessions() as session:
            total = int(await session.scalar(select(func.count()).select_from(DataChunk).where(*where)) or 0)
            rows = list(
                await session.scalars(
                    select(DataChunk)
                    .where(*where)
                    .order_by(DataChunk.chunk_index, DataChunk.id)
                    .offset(offset)
                    .limit(limit)
                )
            )
            indexes = await self._indexes_of(session, [r.id for r in rows])
        return [
            ChunkRow(
                r.id,
                r.dataset_id,
                r.collection_id,
                r.chunk_index,
                r.q,
                r.a,
                "",
                r.updated_at,
                indexes.get(r.id, []),
                r.tokens,
            )
            for r in rows
        ], total
