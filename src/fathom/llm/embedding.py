"""OpenAI-compatible embeddings client (``POST {base_url}/embeddings``), batched."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fathom.llm.endpoint import EndpointClient
from fathom.llm.retry import to_model_error
from fathom.llm.waits import model_waits


@dataclass(frozen=True)
class EmbeddingResult:
    """Vectors in input order plus the prompt tokens the endpoint reported (0 when it did not)."""

    vectors: list[list[float]]
    input_tokens: int
    model: str


class OpenAIEmbeddingModel(EndpointClient):
    """Embeds texts through an OpenAI-compatible endpoint, ``config.batch_size`` inputs per request."""

    _seen_dimensions = 0  # the width of the last vectors returned (0 before the first call)

    @property
    def model_id(self) -> str:
        """The id stored with every vector this model produced."""
        return self.config.id

    async def _batch(self, texts: list[str]) -> tuple[list[list[float]], int]:
        extra = dict(self.config.default_params)
        if self.config.dimensions is not None:
            extra.setdefault("dimensions", self.config.dimensions)

        async def call(attempt: int) -> tuple[Any, int]:
            model_waits()
            response = await self.client.embeddings.create(
                model=self.config.request_model,
                input=texts,
                encoding_format="float",
                extra_body=extra or None,
            )
            return response, attempt

        response, attempt = await self._with_retries(call)
        ordered = sorted(response.data, key=lambda item: item.index)
        if len(ordered) != len(texts):
            raise to_model_error(
                ValueError(f"endpoint returned {len(ordered)} vectors for {len(texts)} inputs"),
                self.config.id,
                attempt,
            )
        tokens = response.usage.prompt_tokens if response.usage is not None else 0
        if ordered:
            self._seen_dimensions = len(ordered[0].embedding)
        return [list(item.embedding) for item in ordered], int(tokens or 0)

    @property
    def dimensions(self) -> int:
        """Vector size: the configured one, else the size seen in the last response, else 0 (unknown yet)."""
        return self.config.dimensions or self._seen_dimensions

    @property
    def max_tokens(self) -> int:
        """Most tokens one input may have (the model's ``max_context``)."""
        return self.config.max_context

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors for ``texts`` in input order (same shape as the local embedder's ``embed``)."""
        return (await self.embed_with_usage(texts)).vectors

    async def embed_with_usage(self, texts: Sequence[str]) -> EmbeddingResult:
        """Vectors plus reported tokens (empty input gives an empty result and sends no request)."""
        vectors: list[list[float]] = []
        tokens = 0
        size = self.config.batch_size
        items = list(texts)
        for start in range(0, len(items), size):
            batch_vectors, batch_tokens = await self._batch(items[start : start + size])
            vectors.extend(batch_vectors)
            tokens += batch_tokens
        return EmbeddingResult(vectors=vectors, input_tokens=tokens, model=self.config.id)

    async def embed_query(self, text: str) -> list[float]:
        """One vector for one text."""
        return (await self.embed([text]))[0]
