"""Model-made training: a collection's chunks sent to its dataset's ``agentModel``, run by the ingestion job.

Modes (FastGPT's training modes): ``qa`` (``trainingType: "qa"``: the model writes question/answer pairs,
stored as q/a rows), ``auto`` (``autoIndexes: true`` on a chunk collection: the model writes extra index
texts of each chunk), and the vision model's ``image`` / ``imageParse`` (``fathom.datasets.image_training``:
an image's description as an index of its chunk, or as an image collection's chunk). Each chunk (or
image) is a training item (``store.knowledge.training``); what the model made of it is written with the
item's deletion in one transaction, so a worker killed half-way loses nothing and a re-run writes nothing
twice. Up to :data:`TRAINING_CONCURRENCY` chunks of a job are with the model at
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
from fathom.datasets.image_training import IMAGE_MODE, IMAGE_MODES, IMAGE_PARSE_MODE, Images, image_key
from fathom.datasets.training_usage import UsageSink, embedding_tokens, training_usage
from fathom.knowledge.chunk_settings import ChunkSettings, split_chunk_indexes
from fathom.knowledge.model_training import (
    AutoIndex,
    auto_index_prompt,
    image_messages,
    parse_auto_indexes,
    qa_prompt,
    qa_rows,
)
from fathom.llm import ChatModel, CompletionResult, ModelRequestError, count_tokens
from fathom.store.knowledge import SqlChunkRepository
from fathom.store.knowledge.training import NewTrainingItem, SqlTrainingRepository
from fathom.store.protocols import (
    AlreadyTrained,
    ChunkToWrite,
    CollectionRecord,
    DatasetRecord,
    NotFound,
    TrainingItemRecord,
    UsageRecord,
)

log = logging.getLogger("fathom.training")

QA_MODE, AUTO_MODE = "qa", "auto"
MODULE_NAMES = {
    QA_MODE: "QA split",
    AUTO_MODE: "Auto index",
    IMAGE_MODE: "Image index",
    IMAGE_PARSE_MODE: "Image parse",
}
TRAINING_CONCURRENCY = 4  # model calls of one job at a time (FastGPT: qaMaxProcess per deployment)

ChatModels = Callable[[str], ChatModel]


def model_training_mode(collection: CollectionRecord) -> str | None:
    """The model training a collection asks for: ``qa``, ``auto`` (auto indexes), ``imageParse`` (an image
    collection), or None (plain chunks; with ``imageIndex`` their images are described after them)."""
    if collection.training_type in (QA_MODE, IMAGE_PARSE_MODE):
        return collection.training_type
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
        vision_models: ChatModels | None = None,
    ) -> None:
        self.vision_models = vision_models
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

    async def queue_items(
        self, collection: CollectionRecord, mode: str, items: Sequence[NewTrainingItem], bill_id: str | None
    ) -> int:
        """Queue ready-made items (images: ``fathom.datasets.image_training``); ones queued already stay."""
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
        self,
        collection: CollectionRecord,
        dataset: DatasetRecord,
        settings: ChunkSettings,
        images: Images | None = None,
    ) -> TrainingOutcome:
        """Send every waiting item of the collection to the model (image items, with their image from
        ``images``, to the vision model), :data:`TRAINING_CONCURRENCY` at a time (each item's result is
        written as soon as it is in)."""
        items = await self.training.pending(collection.id)
        if not items:
            return TrainingOutcome(0, 0)
        models: dict[bool, ChatModel] = {}
        for vision in {item.mode in IMAGE_MODES for item in items}:
            try:
                models[vision] = self._model(dataset, vision)
            except (LookupError, RuntimeError) as exc:  # no (vision) model configured (any more)
                for item in items:
                    if (item.mode in IMAGE_MODES) == vision:
                        await self.training.fail(item.id, f"no model to train with: {exc}")
        embedder = self.embedders.get(dataset.vector_model)
        gate = asyncio.Semaphore(TRAINING_CONCURRENCY)

        async def one(item: TrainingItemRecord) -> bool:
            model = models.get(item.mode in IMAGE_MODES)
            if model is None:
                return False
            async with gate:
                if item.mode in IMAGE_MODES:
                    return await self._train_image(collection, item, model, embedder, settings, images or {})
                return await self._train_one(collection, item, model, embedder, settings)

        done = await asyncio.gather(*(one(item) for item in items))
        return TrainingOutcome(sum(done), len(done) - sum(done))

    def _model(self, dataset: DatasetRecord, vision: bool) -> ChatModel:
        if not vision:
            return self.chat_models(dataset.agent_model)
        if self.vision_models is None:
            raise LookupError("no vision model is configured")
        return self.vision_models(dataset.vlm_model)

    async def _ask(
        self, item: TrainingItemRecord, model: ChatModel, messages: list[Any]
    ) -> CompletionResult | None:
        """The model's answer to ``messages``, or None when it failed (the item keeps the error; the
        client retried with backoff already)."""
        try:
            return await model.complete(messages)
        except ModelRequestError as exc:
            log.warning("training item %s (%s) failed: %s", item.id, item.mode, exc)
            await self.training.fail(item.id, str(exc) or type(exc).__name__)
            return None

    def _model_usage(
        self,
        collection: CollectionRecord,
        item: TrainingItemRecord,
        model: ChatModel,
        result: CompletionResult,
    ) -> UsageRecord:
        return UsageRecord(
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

    async def _train_image(
        self,
        collection: CollectionRecord,
        item: TrainingItemRecord,
        model: ChatModel,
        embedder: Any,
        settings: ChunkSettings,
        images: Images,
    ) -> bool:
        """Describe an item's image: an ``image`` index of its chunk, or (``imageParse``) the chunk."""
        key = image_key(item.q)
        image = images.get(key) if key else None
        if image is None:
            await self.training.fail(item.id, f"image {key} is not in the collection's source any more")
            return False
        context = None if item.mode == IMAGE_PARSE_MODE else item.a
        result = await self._ask(item, model, image_messages(image.data_url(), context))
        if result is None:
            return False
        await self._record(self._model_usage(collection, item, model, result))
        description = result.content.strip()
        if not description:
            await self.training.fail(item.id, f"the vision model {model.config.id} wrote no description")
            return False
        texts = [description] if item.mode == IMAGE_MODE else split_chunk_indexes(description, "", settings)
        vectors = await embedder.embed(texts)
        await self._record(training_usage(collection, embedder, embedding_tokens(texts), item.bill_id))
        try:
            if item.mode == IMAGE_MODE:
                await self.chunks.add_trained_indexes(
                    collection.id,
                    item.chunk_index,
                    texts,
                    vectors,
                    model=embedder.model_id,
                    types=["image"],
                    training_item=item.id,
                )
            else:
                write = ChunkToWrite(
                    description, "", item.chunk_index, texts, vectors, tokens=count_tokens(description)
                )
                await self.chunks.write_chunks(
                    collection.team_id,
                    collection.dataset_id,
                    collection.id,
                    [write],
                    model=embedder.model_id,
                    training_item=item.id,
                )
        except AlreadyTrained:
            log.info("training item %s was written by another run", item.id)
        except NotFound as exc:  # its chunk was deleted meanwhile
            await self.training.fail(item.id, str(exc))
            return False
        return True

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
        result = await self._ask(item, model, [{"role": "user", "content": prompt}])
        if result is None:
            return False
        await self._record(self._model_usage(collection, item, model, result))
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
