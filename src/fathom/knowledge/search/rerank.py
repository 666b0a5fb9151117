"""Rerank stage (spec §5.5): model scores fused with the recall order by ``rerankWeight``.

Documents are ``(q + "\\n" + a).strip()``. Reranked items carry a single ``reRank`` score whose
``index`` is the rerank output order. ``rerankWeight == 1`` keeps the rerank list alone; otherwise the
result is RRF(recall x (1 - w), rerank x w). Any failure, or an empty rerank answer, falls back to the
recall list with ``usingReRank`` false and 0 input tokens.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from fathom.knowledge.search.rrf import RrfInput, dataset_search_result_concat
from fathom.knowledge.search.types import SearchDataItem, SearchScore, TraceEntry

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RerankOutcome:
    """What the rerank stage produced."""

    items: list[SearchDataItem]
    using_re_rank: bool
    input_tokens: int
    error: str | None = None


def _rerank_document(item: SearchDataItem) -> str:
    """The text a reranker sees for one item."""
    return f"{item.q}\n{item.a or ''}".strip()


def _hits(result: Any) -> tuple[list[tuple[int, float]], int | None]:
    """Accept ``[(index, score)]`` or an object with ``hits`` (``index``, ``relevance_score``) and
    ``input_tokens`` (``fathom.llm.RerankResult``)."""
    if hasattr(result, "hits"):
        pairs = [(int(h.index), float(h.relevance_score)) for h in result.hits]
        return pairs, getattr(result, "input_tokens", None)
    return [(int(i), float(s)) for i, s in result], None


async def rerank_search_results(
    items: Sequence[SearchDataItem],
    query: str,
    reranker: Any,
    rerank_weight: float,
    count_tokens: Callable[[str], int],
) -> RerankOutcome:
    """Rerank ``items`` (already deduped) with ``reranker`` and fuse by ``rerank_weight``."""
    if not items:
        return RerankOutcome([], False, 0)
    documents = [_rerank_document(item) for item in items]
    try:
        raw = await reranker.rerank(query, documents)
        hits, reported_tokens = _hits(raw)
        if not hits:
            raise ValueError("Rerank error")
        reranked: list[SearchDataItem] = []
        for position, (index, value) in enumerate(hits):
            if not 0 <= index < len(items):
                raise ValueError(f"Rerank error: index {index} out of range")
            item = items[index]
            reranked.append(
                item.with_scores([SearchScore(type="reRank", value=value, index=position)]).traced(
                    TraceEntry(stage="reRank", score=value, rank=position)
                )
            )
    except Exception as exc:  # any failure falls back to the recall order (spec §5.5.4)
        log.warning("rerank failed, keeping recall order: %s", exc)
        return RerankOutcome(list(items), False, 0, error=str(exc) or type(exc).__name__)

    tokens = reported_tokens
    if tokens is None:
        tokens = count_tokens(query) + sum(count_tokens(doc) for doc in documents)
    if rerank_weight == 1:
        return RerankOutcome(reranked, True, tokens)
    fused = dataset_search_result_concat(
        [
            RrfInput(weight=1 - rerank_weight, items=items, name="recall"),
            RrfInput(weight=rerank_weight, items=reranked, name="reRank"),
        ],
        stage="reRankFusion",
    )
    return RerankOutcome(fused, True, tokens)
