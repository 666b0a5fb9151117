"""Small protocols the upper layers type their model dependencies with (tests pass real clients)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from fathom.llm.chat import ChatStream
from fathom.llm.events import CompletionResult
from fathom.llm.model_config import ModelConfig
from fathom.llm.rerank import RerankResult


class ChatModel(Protocol):
    """What the agent loop needs from a chat model."""

    config: ModelConfig

    def stream(
        self,
        messages: Sequence[Any],
        tools: Sequence[Any] | None = None,
        tool_choice: Any = None,
        **params: Any,
    ) -> ChatStream: ...

    async def complete(
        self,
        messages: Sequence[Any],
        tools: Sequence[Any] | None = None,
        tool_choice: Any = None,
        **params: Any,
    ) -> CompletionResult: ...


class EmbeddingModel(Protocol):
    """What ingestion and search need from an embedder (remote or local)."""

    @property
    def model_id(self) -> str: ...

    @property
    def dimensions(self) -> int: ...

    async def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


class RerankModel(Protocol):
    """What search needs from a reranker."""

    async def rerank(
        self, query: str, documents: Sequence[str], top_n: int | None = None
    ) -> RerankResult: ...
