"""Rerank client for the Jina/Cohere ``/rerank`` format: ``{model, query, documents, top_n}``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fathom.llm.endpoint import EndpointClient
from fathom.llm.retry import to_model_error


@dataclass(frozen=True, slots=True)
class RerankHit:
    """One reranked document: its index in the input list and the endpoint's relevance score."""

    index: int
    relevance_score: float


@dataclass(frozen=True)
class RerankResult:
    """Hits sorted by descending score, and the tokens the endpoint reported (0 when absent)."""

    hits: list[RerankHit]
    input_tokens: int
    model: str


class OpenAIRerankModel(EndpointClient):
    """Calls ``POST {base_url}/rerank`` (Jina, Cohere-compatible, Xinference, vLLM, SiliconFlow, ...)."""

    async def rerank(self, query: str, documents: Sequence[str], top_n: int | None = None) -> RerankResult:
        """Scores for ``documents`` against ``query``, best first (no request when there are none)."""
        if not documents:
            return RerankResult(hits=[], input_tokens=0, model=self.config.id)
        body: dict[str, Any] = {
            **self.config.default_params,
            "model": self.config.request_model,
            "query": query,
            "documents": list(documents),
        }
        if top_n is not None:
            body["top_n"] = top_n

        async def call(attempt: int) -> tuple[Any, int]:
            return await self.client.post("/rerank", cast_to=object, body=body), attempt

        data, attempt = await self._with_retries(call)
        return self._parse(data, len(documents), attempt)

    def _parse(self, data: Any, count: int, attempt: int) -> RerankResult:
        results = data.get("results") if isinstance(data, dict) else None
        if not isinstance(results, list):
            raise to_model_error(ValueError("rerank response has no 'results' list"), self.config.id, attempt)
        hits: list[RerankHit] = []
        for item in results:
            index = item.get("index") if isinstance(item, dict) else None
            score = item.get("relevance_score", item.get("score")) if isinstance(item, dict) else None
            if not isinstance(index, int) or not 0 <= index < count or not isinstance(score, int | float):
                raise to_model_error(ValueError(f"bad rerank result {item!r}"), self.config.id, attempt)
            hits.append(RerankHit(index=index, relevance_score=float(score)))
        hits.sort(key=lambda hit: hit.relevance_score, reverse=True)
        usage = data.get("usage") or data.get("meta", {}).get("billed_units") or {}
        tokens = usage.get("total_tokens") or usage.get("prompt_tokens") or usage.get("input_tokens") or 0
        return RerankResult(hits=hits, input_tokens=int(tokens), model=self.config.id)
