"""Recall of PostgreSQL's fast search paths against exact ones, on the search-latency corpus.

- vector leg: ``SqlVectorIndex`` (HNSW, ``ef_search`` tied to the pool) against the same query with the
  index turned off (``enable_indexscan = off``: a sequential scan ordered by ``embedding <=> q``);
- full-text leg: ``SqlFullTextIndex`` (ranks ``_rank_pool`` candidates) against ``ts_rank`` over every
  match; "by score" counts a returned row when its score is at least the exact list's last score, so a
  row tied with an exact one (same words, same counts: the same score) is not counted as a miss;
- hybrid: ``DatasetSearchService.search`` in ``mixedRecall`` with both fast legs against the same with
  both exact legs (the final results after fusion and the token budget).

Each number is the mean over the queries of |fast ∩ exact| / |exact|.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fathom.datasets import DatasetSearchService, EmbedderResolver
from fathom.knowledge.ports import SearchScope
from fathom.knowledge.search.filters import count_recall_limit
from fathom.knowledge.tokenize import segment_for_index
from fathom.llm import count_tokens
from fathom.store.db import Database
from fathom.store.knowledge import SqlChunkRepository, SqlDatasetRepository, SqlFullTextIndex, SqlVectorIndex


@dataclass
class RecallResult:
    queries: int
    vector_pool: int  # the embedding leg's pool in mixedRecall
    vector_recall: float  # recall@pool of the HNSW answer
    vector_recall_at_10: float
    full_text_pool: int
    full_text_recall: float  # recall@pool of the candidates' ranking, by id
    full_text_recall_by_score: float
    hybrid_recall: float  # of the final mixedRecall results
    hybrid_results: float


def _overlap(fast: Sequence[str], exact: Sequence[str]) -> float:
    """|fast ∩ exact| / |exact| (1.0 when both are empty)."""
    return len(set(fast) & set(exact)) / len(exact) if exact else float(not fast)


def _overlap_by_score(fast: Sequence[tuple[str, float]], exact: Sequence[tuple[str, float]]) -> float:
    """The share of ``exact``'s places that ``fast`` fills with a row scoring at least exact's last."""
    if not exact:
        return float(not fast)
    floor = exact[-1][1] * (1 - 1e-6)
    return min(len(exact), sum(1 for _, score in fast if score >= floor)) / len(exact)


def _service(db: Database, resolver: EmbedderResolver, *, exact: bool) -> DatasetSearchService:
    return DatasetSearchService(
        SqlDatasetRepository(db),
        SqlChunkRepository(db, segment_for_index),
        SqlFullTextIndex(db, segment_for_index, exact=exact),
        SqlVectorIndex(db, exact=exact),
        resolver,
        count_tokens=count_tokens,
    )


async def measure_recall(
    db: Database,
    team_id: str,
    dataset_id: str,
    queries: Mapping[str, Sequence[float]],
    resolver: EmbedderResolver,
    *,
    limit: int = 5000,
) -> RecallResult:
    """Recall of each fast path against its exact one over ``queries`` (text → query vector)."""
    scope = SearchScope(dataset_ids=frozenset([dataset_id]))
    vector_pool, full_text_pool = count_recall_limit("mixedRecall")
    fast_vectors, exact_vectors = SqlVectorIndex(db), SqlVectorIndex(db, exact=True)
    fast_text = SqlFullTextIndex(db, segment_for_index)
    exact_text = SqlFullTextIndex(db, segment_for_index, exact=True)
    fast_service, exact_service = _service(db, resolver, exact=False), _service(db, resolver, exact=True)
    scores: dict[str, list[float]] = {}
    found: list[float] = []
    for text, vector in queries.items():
        fast = [data_id for data_id, _ in await fast_vectors.search(vector, vector_pool, scope)]
        exact = [data_id for data_id, _ in await exact_vectors.search(vector, vector_pool, scope)]
        scores.setdefault("vector", []).append(_overlap(fast, exact))
        scores.setdefault("vector10", []).append(_overlap(fast[:10], exact[:10]))
        fast_hits = await fast_text.search(text, full_text_pool, scope)
        exact_hits = await exact_text.search(text, full_text_pool, scope)
        scores.setdefault("text", []).append(_overlap([d for d, _ in fast_hits], [d for d, _ in exact_hits]))
        scores.setdefault("text_score", []).append(_overlap_by_score(fast_hits, exact_hits))
        params: dict[str, Any] = {
            "queries": [text],
            "datasetIds": [dataset_id],
            "searchMode": "mixedRecall",
            "limit": limit,
        }
        fast_result = await fast_service.search(team_id, params)
        exact_result = await exact_service.search(team_id, params)
        scores.setdefault("hybrid", []).append(
            _overlap([i.id for i in fast_result.search_res], [i.id for i in exact_result.search_res])
        )
        found.append(len(fast_result.search_res))

    def mean(name: str) -> float:
        return round(statistics.fmean(scores[name]), 4) if scores.get(name) else 0.0

    return RecallResult(
        queries=len(queries),
        vector_pool=vector_pool,
        vector_recall=mean("vector"),
        vector_recall_at_10=mean("vector10"),
        full_text_pool=full_text_pool,
        full_text_recall=mean("text"),
        full_text_recall_by_score=mean("text_score"),
        hybrid_recall=mean("hybrid"),
        hybrid_results=round(statistics.fmean(found), 1) if found else 0.0,
    )
