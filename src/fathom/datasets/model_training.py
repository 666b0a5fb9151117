"""Model-made training: a collection's chunks sent to its dataset's ``agentModel``, run by the ingestion job.

Modes (FastGPT's training modes): ``qa`` (``trainingType: "qa"``: the model writes question/answer pairs,
stored as q/a rows) and ``auto`` (``autoIndexes: true`` on a chunk collection: the model writes extra index
texts of each chunk). Each chunk is a training item (``store.knowledge.training``); what the model made of
it is written with the item's deletion in one transaction, so a worker killed half-way loses nothing and
a re-run writes nothing twice. Up to :data:`TRAINING_CONCURRENCY` chunks of a job are with the model at
once. A model call is retried with backoff by the model client (429, 5xx,
timeouts: ``max_retries`` of the model's config); a chunk it still fails on keeps the error as a failed
item, and the other chunks go on. Model and embedding usage go to the collection's training bill.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from fathom.datasets.embedders import EmbedderResolver
from fathom.datasets.training_usage import UsageSink, embedding_tokens, training_usage
from fathom.knowledge.chunk_settings import ChunkSettings, split_chunk_indexes
from fathom.knowledge.model_training import (
    AutoIndex,
    auto_index_prompt,
    parse_auto_indexes,
    qa_prompt,
    qa_rows,
)
from fathom.llm import ChatModel, ModelRequestError, count_tokens
from fathom.store.knowledge import SqlChunkRepository
from fathom.store.knowledge.training import NewTrainingItem, SqlTrainingRepository
from fathom.store.protocols import (
    AlreadyTrained,
    ChunkToWrite,
    CollectionRecord,
    DatasetRecord,
    TrainingItemRecord,
    UsageRecord,
)

log = logging.getLogger("fathom.training")

QA_MODE, AUTO_MODE = "qa", "auto"
MODULE_NAMES = {QA_MODE: "QA split", AUTO_MODE: "Auto index"}
TRAINING_CONCURRENCY = 4  # model calls of one job at a time (FastGPT: qaMaxProcess per deployment)

ChatModels = Callable[[str], ChatModel]


def model_training_mode(collection: CollectionRecord) -> str | None:
    """The model training a collection asks for: ``qa``, ``auto`` (auto indexes), or None (plain chunks)."""
    if collection.training_type == QA_MODE:
        return QA_MODE
    if collection.chunk_settings.get("autoIndexes"):
        return AUTO_MODE
    return None


@dataclass(frozen=True)
class TrainingOutcome:
    trained: int
    failed: int


class ModelTrainer:
    def __init__(
        self,
        training: SqlTrainingRepository,
        chunks: SqlChunkRepository,
        embedders: EmbedderResolver,
        chat_models: ChatModels,
        usage: UsageSink | None = None,
    ) -> None:
        self.training = training
        self.chunks = chunks
        self.embedders = embedders
        self.chat_models = chat_models
        self.usage = usage

    async def queue_pieces(
        self, collection: CollectionRecord, mode: str, pieces: Sequence[tuple[str, str]], bill_id: str | None
    ) -> int:
        """Make a training item of every chunk of the collection's source not written yet (a position
        that has an item already keeps it). Returns how many were added."""
        written = await self.chunks.written_chunk_indexes(collection.id)
        items = [NewTrainingItem(i, q, a) for i, (q, a) in enumerate(pieces) if i not in written]
        return await self.training.add_items(
            collection.team_id, collection.dataset_id, collection.id, mode, items, bill_id=bill_id
        )

    async def queue_rows(
        self,
        collection: CollectionRecord,
        mode: str,
        rows: Sequence[tuple[str, str]],
        *,
        prompt: str | None = None,
        bill_id: str | None = None,
    ) -> int:
        """Queue pushed rows (FastGPT ``pushData`` with ``trainingType`` qa/auto) after the collection's
        last chunk position; ``prompt`` replaces the collection's ``qaPrompt`` for them."""
        taken = await self.chunks.written_chunk_indexes(collection.id) | await self.training.item_positions(
            collection.id
        )
        start = max(taken, default=-1) + 1
        items = [NewTrainingItem(start + i, q, a, prompt) for i, (q, a) in enumerate(rows)]
        return await self.training.add_items(
            collection.team_id, collection.dataset_id, collection.id, mode, items, bill_id=bill_id
        )

    async def train(
        self, collection: CollectionRecord, dataset: DatasetRecord, settings: ChunkSettings
    ) -> TrainingOutcome:
        """Send every waiting item of the collection to the model, :data:`TRAINING_CONCURRENCY` at a
        time (each item's result is written as soon as it is in)."""
        items = await self.training.pending(collection.id)
        if not items:
            return TrainingOutcome(0, 0)
        try:
            model = self.chat_models(dataset.agent_model)
        except (LookupError, RuntimeError) as exc:  # no chat model configured (any more)
            for item in items:
                await self.training.fail(item.id, f"no model to train with: {exc}")
            return TrainingOutcome(0, len(items))
        embedder = self.embedders.get(dataset.vector_model)
        gate = asyncio.Semaphore(TRAINING_CONCURRENCY)

        async def one(item: TrainingItemRecord) -> bool:
            async with gate:
                return await self._train_one(collection, item, model, embedder, settings)

        done = await asyncio.gather(*(one(item) for item in items))
        return TrainingOutcome(sum(done), len(done) - sum(done))

    async def _train_one(
        self,
        collection: CollectionRecord,
        item: TrainingItemRecord,
        model: ChatModel,
        embedder: Any,
        settings: ChunkSettings,
    ) -> bool:
        text = f"{item.q}\n{item.a}".strip()
        if item.mode == QA_MODE:
            prompt = qa_prompt(text, item.prompt or collection.chunk_settings.get("qaPrompt"))
        else:
            prompt = auto_index_prompt(text)
        try:
            result = await model.complete([{"role": "user", "content": prompt}])
        except ModelRequestError as exc:  # the client retried with backoff already
            log.warning("training item %s (%s) failed: %s", item.id, item.mode, exc)
            await self.training.fail(item.id, str(exc) or type(exc).__name__)
            return False
        await self._record(
            UsageRecord(
                team_id=collection.team_id,
                app_id=None,
                source="training",
                module_name=MODULE_NAMES[item.mode],
                model=model.config.id,
                input_tokens=result.usage.input_tokens,
                output_tokens=result.usage.output_tokens,
                total_points=model.config.price(result.usage.input_tokens, result.usage.output_tokens),
                bill_id=item.bill_id,
            )
        )
        writes = self._rows(item, result.content, settings)
        flat = [t for write in writes for t in write.index_texts]
        vectors = await embedder.embed(flat)
        cursor = 0
        for write in writes:
            write.vectors.extend(vectors[cursor : cursor + len(write.index_texts)])
            cursor += len(write.index_texts)
        await self._record(training_usage(collection, embedder, embedding_tokens(flat), item.bill_id))
        try:
            await self.chunks.write_chunks(
                collection.team_id,
                collection.dataset_id,
                collection.id,
                writes,
                model=embedder.model_id,
                training_item=item.id,
            )
        except AlreadyTrained:
            log.info("training item %s was written by another run", item.id)
        return True

    @staticmethod
    def _rows(item: TrainingItemRecord, answer: str, settings: ChunkSettings) -> list[ChunkToWrite]:
        """The rows of the model's answer, each with its default index texts (and, for auto indexes,
        the model's texts as typed extra indexes)."""
        rows: list[tuple[str, str, list[AutoIndex]]]
        if item.mode == QA_MODE:
            rows = [(q, a, []) for q, a in qa_rows(answer, item.q)]
        else:
            extra = parse_auto_indexes(answer, item.q)
            rows = [(item.q, item.a, extra)]
        writes = []
        for q, a, extra in rows:
            default = split_chunk_indexes(q, a, settings) or [q]
            writes.append(
                ChunkToWrite(
                    q=q,
                    a=a,
                    chunk_index=item.chunk_index,
                    index_texts=default + [index.text for index in extra],
                    vectors=[],
                    index_types=["default"] * len(default) + [index.type for index in extra],
                    tokens=count_tokens(q + a),
                )
            )
        return writes

    async def _record(self, usage: UsageRecord) -> None:
        if self.usage is not None and (usage.input_tokens or usage.output_tokens):
            await self.usage.record(usage)
