"""Rerank models by id for knowledge-base search: a named model of type ``rerank`` from the models file,
or the file's default rerank model. With none configured, a search asking for rerank runs without it
(FastGPT: ``usingReRank`` only applies when a rerank model is configured) and says so in ``usingReRank``."""

from __future__ import annotations

from typing import Any


class UnknownRerankModel(LookupError):
    """The named rerank model is not in the models file, or is not of type ``rerank``."""


class RerankerResolver:
    """One rerank client per model id, created on first use and shared."""

    def __init__(self, registry: Any | None = None) -> None:
        self.registry = registry
        self._cache: dict[str, Any] = {}

    def get(self, model_id: str | None = None) -> Any | None:
        """The client of ``model_id``, or of the default rerank model when None (None when there is none)."""
        if self.registry is None:
            if model_id:
                raise UnknownRerankModel(f"rerankModel: {model_id!r} is not configured (FATHOM_MODELS_FILE)")
            return None
        if model_id:
            try:
                config = self.registry.get(model_id)
            except LookupError as exc:
                raise UnknownRerankModel(f"rerankModel: {exc}") from None
            if config.type != "rerank":
                raise UnknownRerankModel(
                    f"rerankModel: model {model_id!r} has type {config.type!r}; name a model of type 'rerank'"
                )
        else:
            try:
                config = self.registry.default_rerank()
            except LookupError:
                return None
        if config.id not in self._cache:
            from fathom.llm import OpenAIRerankModel

            self._cache[config.id] = OpenAIRerankModel(config)
        return self._cache[config.id]

    async def aclose(self) -> None:
        """Close the clients' HTTP connections."""
        for client in self._cache.values():
            await client.aclose()
        self._cache.clear()
