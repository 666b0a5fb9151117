"""Rerank models by id for knowledge-base search: a named model of type ``rerank`` from the models file,
or the file's default rerank model (also for an id this server lacks). With none configured, a search
asking for rerank runs without it (FastGPT: ``usingReRank`` only applies when a rerank model is
configured) and says so in ``usingReRank``."""

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
        """The client of ``model_id``; empty, or not a rerank model this server has: the default rerank
        model, as FastGPT's ``getRerankModel`` falls back (None when there is none: no rerank)."""
        if self.registry is None:
            return None
        config = self.registry.find(model_id) if model_id else None
        if config is None or config.type != "rerank":
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
