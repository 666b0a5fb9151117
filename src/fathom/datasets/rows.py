"""Data rows (chunks) of a collection: push, insert, list, find, edit (re-split, re-embed), delete."""

from __future__ import annotations

from collections.abc import Sequence

from fathom.datasets.dataset_service import DatasetService
from fathom.datasets.embedders import EmbedderResolver
from fathom.datasets.errors import InvalidDatasetRequest, RecordMissing
from fathom.datasets.image_training import IMAGE_PARSE_MODE
from fathom.datasets.ingest import IngestionService, PushIndex, PushRow
from fathom.datasets.model_training import model_training_mode
from fathom.knowledge.chunk_settings import split_chunk_indexes
from fathom.llm import count_tokens
from fathom.store.knowledge import SqlChunkRepository, SqlDatasetRepository
from fathom.store.protocols import ChunkRow, CollectionRecord, NotFound


class DataRowService:
    """The rows of collections, for the data routes; rows written here are embedded before the answer
    unless they are queued for the knowledge base's model."""

    def __init__(
        self,
        datasets: SqlDatasetRepository,
        chunks: SqlChunkRepository,
        embedders: EmbedderResolver,
        ingestion: IngestionService,
        knowledge_bases: DatasetService,
    ) -> None:
        self.datasets = datasets
        self.chunks = chunks
        self.embedders = embedders
        self.ingestion = ingestion
        self.knowledge_bases = knowledge_bases

    async def push(
        self,
        collection: CollectionRecord,
        rows: Sequence[PushRow],
        *,
        training_type: str | None,
        prompt: str | None,
        bill_id: str | None,
    ) -> int:
        """Add ``rows``: stored as sent (``training_type`` ``chunk``), or queued for the model (``qa``,
        ``auto``; None: the collection's training). The count of rows stored or queued."""
        if training_type is None:  # rows pushed into an image collection are stored as sent: no image
            mode = model_training_mode(collection)
            mode = None if mode == IMAGE_PARSE_MODE else mode
        else:
            mode = None if training_type == "chunk" else training_type
        if mode is None:
            return len(await self.ingestion.push_rows(collection, list(rows), bill_id=bill_id))
        dataset = await self.datasets.get_dataset(collection.team_id, collection.dataset_id)
        self.knowledge_bases.training_checks.require_training_model(dataset, f'trainingType "{mode}"')
        if any(row.indexes for row in rows):
            raise InvalidDatasetRequest(
                f'data[].indexes: rows trained by the model (trainingType "{mode}") take no indexes; '
                'push them with trainingType "chunk"'
            )
        assert self.ingestion.trainer is not None
        queued = await self.ingestion.trainer.queue_rows(
            collection, mode, [(row.q, row.a) for row in rows], prompt=prompt, bill_id=bill_id
        )
        if queued:
            await self.datasets.set_collection_state(collection.id, "waiting")
            await self.ingestion.enqueue(collection, bill_id=bill_id, train_only=True)
        return queued

    async def insert(self, collection: CollectionRecord, row: PushRow) -> str:
        """Embed and store one row; its id."""
        ids = await self.ingestion.push_rows(collection, [row])
        return ids[0]

    async def list_rows(
        self, team_id: str, collection_id: str, *, offset: int, limit: int, search: str
    ) -> tuple[list[ChunkRow], int]:
        return await self.chunks.list_chunks(
            team_id, collection_id, offset=offset, limit=limit, search=search
        )

    async def find(self, team_id: str, data_id: str) -> ChunkRow:
        """The team's row; a row of another team is missing exactly as a row that does not exist."""
        missing = RecordMissing("data", f"data {data_id} not found")
        row = (await self.chunks.get_many([data_id])).get(data_id)
        if row is None:
            raise missing
        try:
            await self.datasets.get_collection(team_id, row.collection_id)
        except NotFound:
            raise missing from None
        return row

    async def update(
        self, team_id: str, row: ChunkRow, *, q: str | None, a: str | None, indexes: Sequence[PushIndex]
    ) -> None:
        """Edit a row (None: the stored q or a kept): the default index texts are split again from q and
        a, ``indexes`` kept with their types, and every index text embedded again."""
        q = q or row.q
        a = row.a if a is None else a
        dataset = await self.datasets.get_dataset(team_id, row.dataset_id)
        settings = self.embedders.chunk_settings(dataset.vector_model)
        defaults = split_chunk_indexes(q, a, settings) or [q]
        texts = defaults + [index.text for index in indexes]
        embedder = self.embedders.get(dataset.vector_model)
        vectors = await embedder.embed(texts)
        await self.chunks.update_chunk(
            team_id,
            row.id,
            q=q,
            a=a,
            index_texts=texts,
            vectors=vectors,
            model=embedder.model_id,
            tokens=count_tokens(q + a),
            index_types=["default"] * len(defaults) + [index.type for index in indexes],
        )

    async def delete(self, team_id: str, data_id: str) -> None:
        await self.chunks.delete_chunk(team_id, data_id)
