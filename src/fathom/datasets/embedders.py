"""Embedding models by id: the embedded local model, or any OpenAI-compatible model from the models file."""

from __future__ import annotations

from typing import Any, cast

from fathom.knowledge.ports import Embedder
from fathom.llm.local_embedding import LOCAL_EMBEDDING_MODEL_ID, LocalEmbedder


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

    def get(self, model_id: str) -> Embedder:
        if model_id in self._cache:
            return self._cache[model_id]
        embedder: Embedder
        if model_id == LOCAL_EMBEDDING_MODEL_ID:
            embedder = LocalEmbedder()
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

    def max_tokens(self, model_id: str) -> int | None:
        embedder = self.get(model_id)
        value = getattr(embedder, "max_tokens", None)
        if value is None and self.registry is not None and model_id != LOCAL_EMBEDDING_MODEL_ID:
            value = getattr(self.registry.get(model_id), "max_context", None)
        return int(value) if value else None
