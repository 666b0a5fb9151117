"""Recall legs (spec §5.3.5-6): embedding and full-text candidates, fused per source.

Each query is searched separately; hits map from index rows to chunks (first hit of a chunk wins, so a
chunk with several matching indexes counts once per query), get a ``{type, value, index}`` score, and the
per-query lists are fused with weight-1 RRF and cut to the leg's recall limit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fathom.knowledge.ports import ChunkStore, FullTextIndex, Hit, SearchScope, VectorIndex
from fathom.knowledge.search.rrf import RrfInput, dataset_search_result_concat
from fathom.knowledge.search.types import ScoreType, SearchDataItem, SearchScore, TraceEntry, TraceStage


async def embed_texts(embedder: Any, texts: Sequence[str]) -> tuple[list[list[float]], int | None]:
    """Vectors of ``texts`` and the tokens the embedder reported (None when it reports none).

    Accepts embedders returning ``list[list[float]]`` (``fathom.knowledge.ports.Embedder``) or an object
    with ``vectors`` and ``input_tokens`` (``fathom.llm.EmbeddingResult``)."""
    result = await embedder.embed(list(texts))
    if hasattr(result, "vectors"):
        return [list(v) for v in result.vectors], getattr(result, "input_tokens", None)
    return [list(v) for v in result], None


def _to_items(
    hits: Sequence[Hit],
    rows: Mapping[str, SearchDataItem],
    score_type: ScoreType,
    stage: TraceStage,
    query: str,
) -> list[SearchDataItem]:
    items: list[SearchDataItem] = []
    seen: set[str] = set()
    for data_id, value in hits:
        row = rows.get(data_id)
        if row is None or data_id in seen:
            continue
        seen.add(data_id)
        rank = len(items)
        score = SearchScore(type=score_type, value=value, index=rank)
        entry = TraceEntry(stage=stage, score=value, rank=rank, detail=f"query: {query}")
        items.append(row.traced(entry, scores=[score]))
    return items


def _fuse_and_cut(
    per_query: list[list[SearchDataItem]], limit: int, stage: TraceStage, keep_cut: bool
) -> tuple[list[SearchDataItem], list[SearchDataItem]]:
    fused = dataset_search_result_concat(
        [RrfInput(weight=1, items=items, name=f"query{i + 1}") for i, items in enumerate(per_query)],
        stage="rrf",
    )
    if not keep_cut:
        return fused[:limit], []
    beyond = TraceEntry(stage=stage, passed=False, detail=f"beyond recall limit {limit}")  # one for all
    cut = [item.traced(beyond, cut=True) for item in fused[limit:]]
    return fused[:limit], cut


async def _load_rows(store: ChunkStore, hit_lists: Sequence[Sequence[Hit]]) -> Mapping[str, SearchDataItem]:
    ids = list(dict.fromkeys(data_id for hits in hit_lists for data_id, _ in hits))
    return await store.get_many(ids) if ids else {}


async def embedding_recall(
    queries: Sequence[str],
    vectors: Sequence[Sequence[float]],
    index: VectorIndex,
    store: ChunkStore,
    scope: SearchScope,
    limit: int,
    keep_cut: bool = True,
) -> tuple[list[SearchDataItem], list[SearchDataItem]]:
    """Vector search per query vector, mapped to chunks, fused per query, cut to ``limit`` (the items
    beyond it, traced, second; none with ``keep_cut`` False)."""
    if limit <= 0 or not vectors:
        return [], []
    hit_lists = [await index.search(vector, limit, scope) for vector in vectors]
    rows = await _load_rows(store, hit_lists)
    per_query = [
        _to_items(hits, rows, "embedding", "embeddingRecall", query)
        for query, hits in zip(queries, hit_lists, strict=True)
    ]
    return _fuse_and_cut(per_query, limit, "embeddingRecall", keep_cut)


async def full_text_recall(
    queries: Sequence[str],
    index: FullTextIndex,
    store: ChunkStore,
    scope: SearchScope,
    limit: int,
    keep_cut: bool = True,
) -> tuple[list[SearchDataItem], list[SearchDataItem]]:
    """Full-text search per query, mapped to chunks, fused per query, cut to ``limit`` (the items beyond
    it, traced, second; none with ``keep_cut`` False)."""
    if limit <= 0 or not queries:
        return [], []
    hit_lists = [await index.search(query, limit, scope) for query in queries]
    rows = await _load_rows(store, hit_lists)
    per_query = [
        _to_items(hits, rows, "fullText", "fullTextRecall", query)
        for query, hits in zip(queries, hit_lists, strict=True)
    ]
    return _fuse_and_cut(per_query, limit, "fullTextRecall", keep_cut)
