"""``search_dataset_data``: the text search pipeline in the normative order of spec §5.3.

queries -> embedding recall and full-text recall (pools from ``count_recall_limit``) -> fusion of the
legs (``fathom.knowledge.search.hybrid``: by default a convex combination of normalised scores with the
embedding weight scaled by how much of the query the embedding model can read; ``fusion: "rrf"``:
FastGPT's weighted RRF by ``embeddingWeight``) -> optional rerank fused by ``rerankWeight`` (fallback
on failure) -> dedupe -> similarity filter (on the score type ``similarity_score_type`` names) -> token
budget (``limit``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from fathom.knowledge.ports import ChunkStore, FullTextIndex, SearchScope, VectorIndex
from fathom.knowledge.search.filters import (
    count_recall_limit,
    dedupe_results,
    deduped,
    filter_by_max_tokens,
    filter_by_similarity,
    normalize_search_mode,
    similar_enough,
    similarity_score_type,
)
from fathom.knowledge.search.hybrid import fuse_legs, query_coverage
from fathom.knowledge.search.recall import embed_texts, embedding_recall, full_text_recall
from fathom.knowledge.search.rerank import rerank_search_results
from fathom.knowledge.search.types import SearchDataItem, SearchDatasetDataParams, SearchDatasetDataResponse


def _approximate_token_count(text: str) -> int:
    """Rough token count when no tokenizer is passed: a CJK character is about one token, other text
    about four characters per token. Pass ``fathom.llm.count_tokens`` for the real count."""
    cjk = sum(1 for ch in text if "\u3000" <= ch <= "\u9fff" or "\uac00" <= ch <= "\ud7af")
    return cjk + -(-(len(text) - cjk) // 4)


async def search_dataset_data(
    params: SearchDatasetDataParams | Mapping[str, Any],
    *,
    embedder: Any,
    full_text_index: FullTextIndex,
    vector_index: VectorIndex,
    chunk_store: ChunkStore,
    reranker: Any | None = None,
    count_tokens: Callable[[str], int] | None = None,
    keep_cut: bool = True,
) -> SearchDatasetDataResponse:
    """Search knowledge bases for ``params.queries`` and return the ranked, filtered, budgeted chunks.

    ``embedder`` follows ``fathom.knowledge.ports.Embedder`` (or returns ``fathom.llm.EmbeddingResult``);
    ``reranker`` follows ``ports.Reranker`` (or returns ``fathom.llm.RerankResult``). Every returned item
    carries its score trace; items removed by a stage are in ``cutRes`` with ``trace.cutBy`` set, unless
    ``keep_cut`` is False (a caller that shows no removed item, e.g. a workflow's search node: ``cutRes`` is
    then empty: the items past the recall limits, duplicates, below the threshold or over the budget are
    never copied).
    """
    p = (
        params
        if isinstance(params, SearchDatasetDataParams)
        else SearchDatasetDataParams.model_validate(params)
    )
    counter = count_tokens or _approximate_token_count
    mode = normalize_search_mode(p.search_mode)
    rerank_query = p.re_rank_query.strip()
    wants_rerank = p.using_re_rank and bool(rerank_query) and reranker is not None
    queries = [q.strip() for q in p.queries if q and q.strip()]
    response = SearchDatasetDataResponse(
        searchMode=mode, limit=p.limit, similarity=p.similarity, queries=queries
    )

    forbidden = set(p.forbid_collection_ids)
    allowed = None if p.collection_ids is None else [c for c in p.collection_ids if c not in forbidden]
    if (allowed is not None and not allowed) or not queries or not p.dataset_ids:
        return response
    scope = SearchScope(
        dataset_ids=frozenset(p.dataset_ids),
        collection_ids=None if allowed is None else frozenset(allowed),
        exclude_collection_ids=frozenset(forbidden),
    )

    embedding_limit, full_text_limit = count_recall_limit(mode)
    coverage: float | None = None  # the share of the queries the embedding model can read

    async def embedding_leg() -> tuple[list[SearchDataItem], list[SearchDataItem]]:
        if embedding_limit <= 0:
            return [], []
        nonlocal coverage
        vectors, reported = await embed_texts(embedder, queries)
        response.embedding_tokens = reported if reported is not None else sum(counter(q) for q in queries)
        if mode == "mixedRecall":  # the model is loaded now: tokenizing the queries costs microseconds
            coverage = query_coverage(embedder, queries)
        return await embedding_recall(
            queries, vectors, vector_index, chunk_store, scope, embedding_limit, keep_cut
        )

    # the legs run concurrently: the full-text query is handed to the database first, so it runs
    # while the query is embedded and the vectors are scanned
    full_text_leg = asyncio.ensure_future(
        full_text_recall(queries, full_text_index, chunk_store, scope, full_text_limit, keep_cut)
    )
    try:
        embedding_items, embedding_cut = await embedding_leg()
    except BaseException:
        full_text_leg.cancel()
        raise
    full_text_items, full_text_cut = await full_text_leg
    cut: list[SearchDataItem] = [*embedding_cut, *full_text_cut]

    fused = fuse_legs(
        embedding_items,
        full_text_items,
        weight=p.embedding_weight,
        fusion=p.fusion,
        normalization=p.convex_normalization,
        coverage=coverage,
    )
    using_re_rank = False
    score_type = similarity_score_type(mode, False)
    if not keep_cut and not wants_rerank:
        # nothing removed is shown: the fused items pass dedupe and the threshold one at a time, and the
        # budget stops taking them at its limit (the fused items beyond it are never made)
        kept = similar_enough(deduped(fused), p.similarity, score_type)
        results, _ = filter_by_max_tokens(kept, p.limit, counter, keep_cut=False)
    else:
        results = list(fused)
        if wants_rerank and results:
            deduped_items, dropped = dedupe_results(results, keep_cut=keep_cut)
            cut += dropped
            outcome = await rerank_search_results(
                deduped_items, rerank_query, reranker, p.rerank_weight, counter
            )
            results, using_re_rank = outcome.items, outcome.using_re_rank
            response.re_rank_input_tokens = outcome.input_tokens
        results, dropped = dedupe_results(results, keep_cut=keep_cut)
        cut += dropped
        score_type = similarity_score_type(mode, using_re_rank)
        results, dropped = filter_by_similarity(results, p.similarity, score_type, keep_cut=keep_cut)
        cut += dropped
        results, dropped = filter_by_max_tokens(results, p.limit, counter, keep_cut=keep_cut)
        cut += dropped

    response.search_res = results
    response.cut_res = cut  # empty when not ``keep_cut``: no stage returned what it removed
    response.using_re_rank = using_re_rank
    response.using_similarity_filter = score_type is not None and p.similarity is not None
    return response
