"""Ingestion: a collection's source → parse → chunk → embed in batches → write, as a durable job.

States: ``waiting → parsing → indexing → ready | error``. Each batch (chunk rows, full-text rows,
vectors and the progress counter) is one transaction. A job that is run again (its worker died, or
it failed and is retried) skips the chunks an earlier run already wrote, so nothing is lost and
nothing is written twice.

A failure no retry can fix fails the job at once (:func:`is_permanent`): a link the egress guard refuses
(also at a redirect), a 4xx answer other than 408/429, a document that does not parse. Timeouts, 5xx
answers, refused connections and a worker that died are retried.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from fathom.datasets.auto_model import choose_model
from fathom.datasets.chunking import collection_chunk_settings, split_collection_text, split_rule_of
from fathom.datasets.embedders import EmbedderResolver
from fathom.datasets.image_training import (
    IMAGE_MODE,
    IMAGE_PARSE_MODE,
    image_file,
    image_index_items,
    image_parse_item,
)
from fathom.datasets.model_training import ModelTrainer, model_training_mode
from fathom.datasets.training_usage import UsageSink, embedding_tokens, training_usage
from fathom.knowledge.chunk_settings import ChunkSettings, split_chunk_indexes
from fathom.knowledge.parse import (
    DocumentParseError,
    EmbeddedImage,
    decode_text,
    extract_data_url_images,
    parse_document,
)
from fathom.knowledge.parse.selector import web_page_text
from fathom.llm import count_tokens
from fathom.security import EgressDenied, EgressRedirectError, EgressSizeError
from fathom.store.errors import database_unavailable
from fathom.store.files import LocalFileStore
from fathom.store.knowledge import SqlChunkRepository, SqlDatasetRepository
from fathom.store.protocols import (
    ChunkToWrite,
    CollectionRecord,
    DatasetRecord,
    JobQueue,
    JobRecord,
    PermanentJobFailure,
)

INGEST_JOB_KIND = "dataset.ingest"
EMBED_BATCH_SIZE = 32

log = logging.getLogger("fathom.ingest")

HttpClientFactory = Callable[[], Any]


_RETRYABLE_CLIENT_ERRORS = (408, 429)  # request timeout, too many requests: later may work


def is_permanent(exc: BaseException) -> bool:
    """Whether running the ingestion again cannot help: the egress guard refused the source (or a
    redirect of it), the source answered 4xx (but 408/429), or the document does not parse."""
    if isinstance(exc, (EgressDenied, EgressRedirectError, EgressSizeError, DocumentParseError)):
        return True
    if isinstance(exc, httpx.HTTPStatusError):
        status = exc.response.status_code
        return 400 <= status < 500 and status not in _RETRYABLE_CLIENT_ERRORS
    return False


@dataclass(frozen=True)
class PushIndex:
    """An extra index text of a pushed row and its FastGPT type (``custom``, ``summary``, ``question``…)."""

    text: str
    type: str = "custom"


@dataclass(frozen=True)
class PushRow:
    """A ready-made row: main text, auxiliary text, and extra (custom) index texts."""

    q: str
    a: str = ""
    indexes: tuple[PushIndex, ...] = ()


@dataclass(frozen=True)
class IngestionOutcome:
    chunks: int
    skipped: int


class IngestionService:
    def __init__(
        self,
        datasets: SqlDatasetRepository,
        chunks: SqlChunkRepository,
        jobs: JobQueue,
        embedders: EmbedderResolver,
        files: LocalFileStore,
        http_client: HttpClientFactory | None = None,
        *,
        max_attempts: int = 3,
        usage: UsageSink | None = None,
        trainer: ModelTrainer | None = None,
    ) -> None:
        self.usage = usage
        self.trainer = trainer
        self.datasets = datasets
        self.chunks = chunks
        self.jobs = jobs
        self.embedders = embedders
        self.files = files
        self.http_client = http_client
        self.max_attempts = max_attempts

    async def enqueue(
        self,
        collection: CollectionRecord,
        *,
        bill_id: str | None = None,
        train_only: bool = False,
        priority: int = 0,
    ) -> JobRecord:
        """Queue the ingestion of a collection (its status stays ``waiting`` until a worker claims it);
        its embedding usage is recorded under ``bill_id`` (a training bill) when given. ``train_only``:
        the source is not read again, only the collection's waiting training items go to the model
        (pushed rows, retried chunks). A negative ``priority`` waits behind every normal job (the
        first-start demo)."""
        payload: dict[str, Any] = {"collectionId": collection.id, **({"billId": bill_id} if bill_id else {})}
        if train_only:
            payload["trainOnly"] = True
        return await self.jobs.enqueue(
            INGEST_JOB_KIND,
            payload,
            team_id=collection.team_id,
            max_attempts=self.max_attempts,
            lane=collection.dataset_id,  # workers take knowledge bases round-robin
            priority=priority,
        )

    async def queue_positions(self) -> dict[str, int]:
        """Collection id → its ingestion job's place in the queue (1: claimed next), for queued jobs."""
        positions = await self.jobs.queue_positions()  # every kind the workers take
        by_collection: dict[str, int] = {}
        for job in await self.jobs.list_jobs(status="queued", kind=INGEST_JOB_KIND):
            collection_id = job.payload.get("collectionId")
            if isinstance(collection_id, str) and job.id in positions:
                by_collection[collection_id] = positions[job.id]
        return by_collection

    async def _source_text(self, collection: CollectionRecord, *, table: bool = False) -> str:
        """The collection's text; with ``table`` a file is read as plain text (Q&A pairs: its CSV rows)."""
        raw_text, raw_link, file_id = await self.datasets.get_collection_source(collection.id)
        if raw_text is not None:
            return raw_text
        if file_id is not None:
            record, data = await self.files.read(file_id)
            return decode_text(data)[0] if table else parse_document(data, record.name).text
        if raw_link is not None:
            if self.http_client is None:
                raise RuntimeError("link import needs an outbound HTTP client (the egress guard)")
            async with self.http_client() as client:
                response = await client.get(raw_link)
                response.raise_for_status()
                body = response.content
            selector = collection.metadata.get("webPageSelector")
            return web_page_text(body, raw_link, selector if isinstance(selector, str) else None)
        raise ValueError(f"collection {collection.id} has no text, file or link to ingest")

    async def _source_with_images(self, collection: CollectionRecord) -> tuple[str, dict[str, EmbeddedImage]]:
        """The collection's text with its embedded images taken out (``image:<key>`` references), and the
        images by key: ``data:`` images of a text or a txt/md/html file, pictures of a docx file, or an
        image collection's image. A link's page is read as text only: images are never fetched by URL."""
        raw_text, _, file_id = await self.datasets.get_collection_source(collection.id)
        if raw_text is not None:
            text, found = extract_data_url_images(raw_text)
            return text, {image.key: image for image in found}
        if file_id is not None:
            record, data = await self.files.read(file_id)
            if collection.training_type == IMAGE_PARSE_MODE:
                image = image_file(record.name, data)
                if image is None:
                    raise DocumentParseError(record.name, "not a png, jpg or webp image")
                return "", {image.key: image}
            parsed = parse_document(data, record.name, images=True)
            return parsed.text, {image.key: image for image in parsed.images}
        return await self._source_text(collection), {}

    async def _settled(self, dataset: DatasetRecord, text: str) -> DatasetRecord:
        """The dataset, with its model settled from ``text`` if it is a ``vectorModel: "auto"`` dataset
        whose first import this is (``fathom.datasets.auto_model``); before anything is embedded."""
        if not dataset.auto_model_pending:
            return dataset
        choice = choose_model(text, self.embedders.default_model_id, "the first document")
        if await self.datasets.settle_auto_model(dataset.id, choice.model, choice.reason):
            log.info("dataset %s: vectorModel auto chose %s (%s)", dataset.id, choice.model, choice.reason)
        return await self.datasets.get_dataset(dataset.team_id, dataset.id)

    def _settings(
        self, collection: CollectionRecord, model_id: str, dataset_settings: dict[str, Any]
    ) -> ChunkSettings:
        return collection_chunk_settings(
            self.embedders, model_id, {**dataset_settings, **collection.chunk_settings}
        )

    async def run(self, job: JobRecord) -> dict[str, Any]:
        """The job handler."""
        collection_id = str(job.payload["collectionId"])
        collection = await self.datasets.get_collection(None, collection_id)
        final_attempt = job.attempts >= job.max_attempts
        bill_id = job.payload.get("billId")
        try:
            outcome = await self._ingest(
                collection, bill_id if isinstance(bill_id, str) else None, bool(job.payload.get("trainOnly"))
            )
        except Exception as exc:
            if database_unavailable(exc):
                raise  # the worker runs the step again when the database returns (not a failure)
            message = f"{type(exc).__name__}: {exc}"
            if is_permanent(exc):
                await self.datasets.set_collection_state(collection.id, "error", error=message)
                raise PermanentJobFailure(message) from exc
            if final_attempt:
                await self.datasets.set_collection_state(collection.id, "error", error=message)
            else:
                await self.datasets.set_collection_state(
                    collection.id, "waiting", error=f"retrying after: {message}"
                )
            raise
        return {"chunks": outcome.chunks, "skipped": outcome.skipped}

    async def _record_usage(
        self, collection: CollectionRecord, embedder: Any, tokens: int, bill_id: str | None
    ) -> None:
        if self.usage is not None and tokens > 0:
            await self.usage.record(training_usage(collection, embedder, tokens, bill_id))

    async def push_rows(
        self, collection: CollectionRecord, rows: Sequence[PushRow], *, bill_id: str | None = None
    ) -> list[str]:
        """Embed and write ready-made rows (FastGPT ``pushData``): each row's default indexes (q and a split
        to the index size) plus its custom index texts (typed as sent). One transaction for the whole
        batch; the embedding usage is recorded under ``bill_id`` when given."""
        dataset = await self.datasets.get_dataset(collection.team_id, collection.dataset_id)
        dataset = await self._settled(dataset, "\n".join(f"{row.q}\n{row.a}" for row in rows))
        embedder = self.embedders.get(dataset.vector_model)
        chosen = {**dataset.chunk_settings, **collection.chunk_settings}
        settings = self.embedders.chunk_settings(dataset.vector_model, split_rule=split_rule_of(chosen))
        start = max(await self.chunks.written_chunk_indexes(collection.id), default=-1) + 1
        defaults = [split_chunk_indexes(row.q, row.a, settings) or [row.q] for row in rows]
        texts = [
            group + [index.text for index in row.indexes] for row, group in zip(rows, defaults, strict=True)
        ]
        flat = [text for group in texts for text in group]
        vectors = await embedder.embed(flat) if flat else []
        writes, cursor = [], 0
        for offset, (row, group, default) in enumerate(zip(rows, texts, defaults, strict=True)):
            writes.append(
                ChunkToWrite(
                    row.q,
                    row.a,
                    start + offset,
                    group,
                    vectors[cursor : cursor + len(group)],
                    index_types=["default"] * len(default) + [index.type for index in row.indexes],
                    tokens=count_tokens(row.q + row.a),
                )
            )
            cursor += len(group)
        if not writes:
            return []
        await self._record_usage(collection, embedder, embedding_tokens(flat), bill_id)
        ids = await self.chunks.write_chunks(
            collection.team_id, collection.dataset_id, collection.id, writes, model=embedder.model_id
        )
        done = len(await self.chunks.written_chunk_indexes(collection.id))
        await self.datasets.set_collection_state(collection.id, "ready", chunks_total=done, chunks_done=done)
        return ids

    async def count_chunks(self, collection: CollectionRecord, text: str) -> int:
        """How many chunks ``text`` makes under the collection's settings: what its ingestion queues
        (FastGPT's ``insertLen`` for a text collection). A text import is a first document too: a pending
        ``vectorModel: "auto"`` dataset settles its model here."""
        dataset = await self.datasets.get_dataset(collection.team_id, collection.dataset_id)
        dataset = await self._settled(dataset, text)
        qa_pairs = bool({**dataset.chunk_settings, **collection.chunk_settings}.get("qaPairs"))
        settings = self._settings(collection, dataset.vector_model, dataset.chunk_settings)
        if _image_index(collection) and not qa_pairs:
            text = extract_data_url_images(text)[0]  # what the import chunks
        return len(split_collection_text(text, settings, qa_pairs=qa_pairs))

    async def _ingest(
        self, collection: CollectionRecord, bill_id: str | None = None, train_only: bool = False
    ) -> IngestionOutcome:
        dataset = await self.datasets.get_dataset(collection.team_id, collection.dataset_id)
        mode = model_training_mode(collection)
        if self.trainer is not None and (mode is not None or train_only):
            return await self._train_with_model(collection, dataset, None if train_only else mode, bill_id)
        await self.datasets.set_collection_state(collection.id, "parsing")
        qa_pairs = bool({**dataset.chunk_settings, **collection.chunk_settings}.get("qaPairs"))
        image_index = self.trainer is not None and _image_index(collection) and not qa_pairs
        images: dict[str, EmbeddedImage] = {}
        if image_index:
            text, images = await self._source_with_images(collection)
        else:
            text = await self._source_text(collection, table=qa_pairs)
        dataset = await self._settled(dataset, text)
        settings = self._settings(collection, dataset.vector_model, dataset.chunk_settings)
        pieces = split_collection_text(text, settings, qa_pairs=qa_pairs)
        done = await self.chunks.written_chunk_indexes(collection.id)
        if image_index and self.trainer is not None:
            # queued before their chunks are written: a chunk written is a chunk whose images are queued
            await self.trainer.queue_items(collection, IMAGE_MODE, image_index_items(pieces, done), bill_id)
        described = (
            len(await self.trainer.training.pending(collection.id)) if image_index and self.trainer else 0
        )
        await self.datasets.set_collection_state(
            collection.id, "indexing", chunks_total=len(pieces) + described, chunks_done=len(done)
        )
        embedder = self.embedders.get(dataset.vector_model)
        todo = [(i, piece) for i, piece in enumerate(pieces) if i not in done]
        await self._embed_and_write(collection, settings, embedder, todo, bill_id)
        if image_index and self.trainer is not None:
            await self.trainer.train(collection, dataset, settings, images)
        await self.datasets.set_collection_state(
            collection.id, "ready", chunks_total=len(pieces), chunks_done=len(pieces)
        )
        return IngestionOutcome(chunks=len(todo), skipped=len(done))

    async def _train_with_model(
        self, collection: CollectionRecord, dataset: DatasetRecord, mode: str | None, bill_id: str | None
    ) -> IngestionOutcome:
        """Model-made training (``fathom.datasets.model_training``): with ``mode``, the source's chunks
        (when the collection has a source; pushed rows are queued by ``pushData``) become training items
        of that mode; then every waiting item goes to the model. Failed items keep their error; the
        collection is ready."""
        assert self.trainer is not None
        images: dict[str, EmbeddedImage] = {}
        if mode == IMAGE_PARSE_MODE:
            await self.datasets.set_collection_state(collection.id, "parsing")
            _, images = await self._source_with_images(collection)
            if not await self.chunks.written_chunk_indexes(collection.id):
                await self.trainer.queue_items(
                    collection, mode, [image_parse_item(image) for image in images.values()], bill_id
                )
        elif mode is not None and any(await self.datasets.get_collection_source(collection.id)):
            await self.datasets.set_collection_state(collection.id, "parsing")
            text = await self._source_text(collection)
            dataset = await self._settled(dataset, text)
            settings = self._settings(collection, dataset.vector_model, dataset.chunk_settings)
            pieces = split_collection_text(text, settings)
            await self.trainer.queue_pieces(collection, mode, pieces, bill_id)
        elif _image_index(collection) or collection.training_type == IMAGE_PARSE_MODE:
            _, images = await self._source_with_images(collection)  # a retry: the images again
        settings = self._settings(collection, dataset.vector_model, dataset.chunk_settings)
        await self.datasets.set_collection_state(collection.id, "indexing")
        outcome = await self.trainer.train(collection, dataset, settings, images)
        await self.datasets.set_collection_state(collection.id, "ready")
        return IngestionOutcome(chunks=outcome.trained, skipped=0)

    async def embed_text(
        self, collection: CollectionRecord, text: str, *, bill_id: str | None = None
    ) -> tuple[list[ChunkToWrite], str]:
        """Chunk and embed ``text`` under the collection's settings without writing anything: the chunks
        (with their vectors) and the embedding model's id, for a caller that swaps a collection's chunks
        at once (a re-sync). The embedding usage is recorded (under ``bill_id`` when given)."""
        dataset = await self.datasets.get_dataset(collection.team_id, collection.dataset_id)
        dataset = await self._settled(dataset, text)
        qa_pairs = bool({**dataset.chunk_settings, **collection.chunk_settings}.get("qaPairs"))
        settings = self._settings(collection, dataset.vector_model, dataset.chunk_settings)
        pieces = split_collection_text(text, settings, qa_pairs=qa_pairs)
        embedder = self.embedders.get(dataset.vector_model)
        writes: list[ChunkToWrite] = []
        tokens = 0
        numbered = list(enumerate(pieces))
        try:
            for start in range(0, len(numbered), EMBED_BATCH_SIZE):
                batch_writes, batch_tokens = await _embed_batch(
                    numbered[start : start + EMBED_BATCH_SIZE], settings, embedder
                )
                writes.extend(batch_writes)
                tokens += batch_tokens
        finally:
            await self._record_usage(collection, embedder, tokens, bill_id)
        return writes, embedder.model_id

    async def _embed_and_write(
        self,
        collection: CollectionRecord,
        settings: ChunkSettings,
        embedder: Any,
        todo: list[tuple[int, tuple[str, str]]],
        bill_id: str | None,
    ) -> None:
        """Embed and write the chunks not written yet, a batch per transaction; then record the tokens
        embedded (also when the run failed part-way: the batches written stay, and were paid for)."""
        tokens = 0
        try:
            for start in range(0, len(todo), EMBED_BATCH_SIZE):
                writes, batch_tokens = await _embed_batch(
                    todo[start : start + EMBED_BATCH_SIZE], settings, embedder
                )
                tokens += batch_tokens
                await self.chunks.write_chunks(
                    collection.team_id, collection.dataset_id, collection.id, writes, model=embedder.model_id
                )
        finally:
            await self._record_usage(collection, embedder, tokens, bill_id)


def _image_index(collection: CollectionRecord) -> bool:
    """Whether the collection's images are described by the vision model (``imageIndex``)."""
    return bool(collection.chunk_settings.get("imageIndex"))


async def _embed_batch(
    batch: list[tuple[int, tuple[str, str]]], settings: ChunkSettings, embedder: Any
) -> tuple[list[ChunkToWrite], int]:
    """Embed one batch of numbered ``(q, a)`` chunks (each with its index texts) in one call: the chunks
    to write, with their vectors, and the tokens embedded."""
    index_texts = [split_chunk_indexes(q, a, settings) or [q] for _, (q, a) in batch]
    flat = [t for texts in index_texts for t in texts]
    vectors = await embedder.embed(flat)
    counts = [count_tokens(t) for t in flat]
    writes, cursor = [], 0
    for (position, (q, a)), texts in zip(batch, index_texts, strict=True):
        # a chunk that is its own one index text has that text's count (not tokenized twice)
        whole = not a and len(texts) == 1 and texts[0] == q
        writes.append(
            ChunkToWrite(
                q=q,
                a=a,
                chunk_index=position,
                index_texts=texts,
                vectors=vectors[cursor : cursor + len(texts)],
                tokens=counts[cursor] if whole else count_tokens(q + a),
            )
        )
        cursor += len(texts)
    return writes, sum(counts)
