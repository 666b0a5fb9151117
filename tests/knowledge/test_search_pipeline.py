"""search_dataset_data end to end: in-memory indexes, the local embedder, a real reranker."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from fathom.knowledge.memory_index import MemoryChunkStore, MemoryFullTextIndex, MemoryVectorIndex
from fathom.knowledge.ports import TextRecord, VectorRecord
from fathom.knowledge.search import SearchDatasetDataParams, search_dataset_data
from fathom.llm.local_embedding import LocalEmbedder

CORPUS = [
    ("c1", "Vitamin D deficiency is linked to weaker bones and a higher risk of fractures."),
    ("c1", "Calcium and vitamin D supplements are often given to older adults to protect bone density."),
    ("c1", "Regular aerobic exercise lowers resting blood pressure in adults with hypertension."),
    ("c1", "Smoking increases the risk of lung cancer and heart disease."),
    ("c2", "The Eiffel Tower in Paris was completed in 1889 for the World's Fair."),
    ("c2", "Mount Everest is the highest mountain above sea level."),
    ("c2", "Photosynthesis converts light energy into chemical energy in plants."),
    ("c2", "数据库索引可以显著提高查询速度。"),
    ("c2", "知识库检索结合全文检索和向量检索。"),
    ("c2", "Vitamin D deficiency is linked to weaker bones and a higher risk of fractures!"),
]


class OverlapReranker:
    async def rerank(self, query: str, documents: Sequence[str]) -> list[tuple[int, float]]:
        words = set(query.lower().split())
        scored = [
            (i, len(words & set(d.lower().split())) / max(len(words), 1)) for i, d in enumerate(documents)
        ]
        return sorted(scored, key=lambda pair: -pair[1])


class BrokenReranker:
    async def rerank(self, query: str, documents: Sequence[str]) -> list[tuple[int, float]]:
        raise TimeoutError("slow")


class Backend:
    def __init__(self, embedder: LocalEmbedder) -> None:
        self.embedder = embedder
        self.text = MemoryFullTextIndex()
        self.vectors = MemoryVectorIndex()
        self.store = MemoryChunkStore()

    async def load(self) -> None:
        texts = [text for _, text in CORPUS]
        vectors = await self.embedder.embed(texts)
        rows = []
        for i, ((collection, text), vector) in enumerate(zip(CORPUS, vectors, strict=True)):
            data_id = f"d{i}"
            rows.append(
                {"id": data_id, "q": text, "datasetId": "ds", "collectionId": collection, "chunkIndex": i}
            )
            await self.text.add([TextRecord(data_id, "ds", collection, text)])
            await self.vectors.add(
                [VectorRecord(f"v{i}", data_id, "ds", collection, vector, self.embedder.model_id)]
            )
        self.store.put(rows)

    async def search(self, reranker: object | None = None, keep_cut: bool = True, **params: object):  # type: ignore[no-untyped-def]
        base: dict[str, object] = {"queries": ["vitamin D and bone fractures"], "datasetIds": ["ds"]}
        base.update(params)
        return await search_dataset_data(
            base,
            embedder=self.embedder,
            full_text_index=self.text,
            vector_index=self.vectors,
            chunk_store=self.store,
            reranker=reranker,
            keep_cut=keep_cut,
        )


@pytest.fixture
async def backend(local_embedder: LocalEmbedder) -> Backend:
    b = Backend(local_embedder)
    await b.load()
    return b


async def test_embedding_mode_carries_only_embedding_scores_and_filters_on_them(backend: Backend) -> None:
    res = await backend.search(searchMode="embedding", similarity=0.3)
    assert res.search_res[0].id in {"d0", "d9"}  # d9 is d0 with "!" for "."
    assert all([s.type for s in item.score] == ["embedding"] for item in res.search_res)
    assert res.using_similarity_filter and not res.using_re_rank
    assert res.embedding_tokens > 0
    cut_by_similarity = [i for i in res.cut_res if i.trace.cut_by == "similarity"]
    assert cut_by_similarity and all(i.score_of("embedding") < 0.3 for i in cut_by_similarity)  # type: ignore[operator]
    first = res.search_res[0].trace.stages
    assert [e.stage for e in first] == ["embeddingRecall", "similarity", "tokenBudget"]


async def test_duplicate_text_is_deduped_with_a_trace(backend: Backend) -> None:
    res = await backend.search(searchMode="embedding")
    ids = {i.id for i in res.search_res}
    assert len(ids & {"d0", "d9"}) == 1
    (dropped,) = [i for i in res.cut_res if i.trace.cut_by == "dedupe"]
    assert dropped.id in {"d0", "d9"} - ids
    assert dropped.trace.stages[-1].detail == f"same text as {(ids & {'d0', 'd9'}).pop()}"


async def test_mixed_recall_fuses_both_legs_and_skips_the_similarity_filter(backend: Backend) -> None:
    res = await backend.search(searchMode="mixedRecall", similarity=0.99, fusion="rrf")
    assert not res.using_similarity_filter
    top = res.search_res[0]
    assert top.id in {"d0", "d9"}
    assert {s.type for s in top.score} == {"embedding", "fullText", "rrf"}
    stages = [e.stage for e in top.trace.stages]
    assert stages[:3] == ["embeddingRecall", "fullTextRecall", "rrf"]
    rrf = [i.score_of("rrf") for i in res.search_res]
    assert rrf == sorted(rrf, reverse=True)  # type: ignore[type-var]


async def test_embedding_weight_one_in_mixed_mode_returns_the_embedding_list_unchanged(
    backend: Backend,
) -> None:
    res = await backend.search(searchMode="mixedRecall", embeddingWeight=1.0)
    assert all(i.score_of("rrf") is None and i.score_of("fullText") is None for i in res.search_res)


async def test_full_text_mode_finds_chinese_words(backend: Backend) -> None:
    res = await backend.search(searchMode="fullTextRecall", queries=["全文检索"])
    assert [i.id for i in res.search_res] == ["d8"]
    assert res.embedding_tokens == 0


async def test_collection_filter_and_defined_but_empty_scope(backend: Backend) -> None:
    only_c2 = await backend.search(collectionIds=["c2"])
    assert {i.collection_id for i in only_c2.search_res} == {"c2"}
    forbidden = await backend.search(forbidCollectionIds=["c1"])
    assert "c1" not in {i.collection_id for i in forbidden.search_res}
    empty = await backend.search(collectionIds=["c1"], forbidCollectionIds=["c1"])
    assert empty.search_res == [] and empty.embedding_tokens == 0


async def test_rerank_is_used_fused_and_filtered_on_rerank_scores(backend: Backend) -> None:
    res = await backend.search(
        OverlapReranker(),
        searchMode="mixedRecall",
        usingReRank=True,
        reRankQuery="vitamin bone",
        similarity=0.5,
    )
    assert res.using_re_rank and res.using_similarity_filter and res.re_rank_input_tokens > 0
    assert all((i.score_of("reRank") or 0) >= 0.5 for i in res.search_res)
    assert any(i.trace.cut_by == "similarity" for i in res.cut_res)
    assert "reRankFusion" in [e.stage for e in res.search_res[0].trace.stages]


async def test_rerank_needs_a_rerank_query(backend: Backend) -> None:
    res = await backend.search(OverlapReranker(), searchMode="mixedRecall", usingReRank=True, reRankQuery=" ")
    assert not res.using_re_rank


async def test_rerank_failure_falls_back(backend: Backend) -> None:
    res = await backend.search(BrokenReranker(), searchMode="mixedRecall", usingReRank=True, reRankQuery="x")
    assert not res.using_re_rank and res.re_rank_input_tokens == 0 and res.search_res


async def test_token_budget_cuts_with_trace(backend: Backend) -> None:
    res = await backend.search(searchMode="mixedRecall", limit=20)
    assert len(res.search_res) == 1 or len(res.search_res) == 2
    assert res.cut_res and any(i.trace.cut_by == "tokenBudget" for i in res.cut_res)


@pytest.mark.parametrize("mode", ["embedding", "fullTextRecall", "mixedRecall"])
@pytest.mark.parametrize("limit", [20, 1500])
async def test_a_search_that_keeps_no_cut_items_returns_the_same_results_and_traces(
    backend: Backend, mode: str, limit: int
) -> None:
    """A workflow's search node shows no removed item: its search skips them (``keep_cut=False``) and
    returns the same items, scores and traces as a search that keeps them (searchTest's)."""
    queries = ["vitamin D and bone fractures", "blood pressure"]
    full = await backend.search(searchMode=mode, limit=limit, queries=queries, similarity=0.2)
    lean = await backend.search(searchMode=mode, limit=limit, queries=queries, similarity=0.2, keep_cut=False)
    assert full.cut_res and lean.cut_res == []
    assert lean.model_dump(exclude={"cut_res"}) == full.model_dump(exclude={"cut_res"})


async def test_several_queries_are_fused_per_source(backend: Backend) -> None:
    res = await backend.search(searchMode="embedding", queries=["bone fractures", "blood pressure exercise"])
    assert {"d2", "d1"} <= {i.id for i in res.search_res[:4]}
    for item in res.search_res:
        ranks = [e.rank for e in item.trace.stages if e.stage == "embeddingRecall"]
        assert len(ranks) == 2  # recalled by both queries, fused with weight 1
        assert item.score_of("rrf") == sum(1 / (60 + r + 1) for r in ranks if r is not None)


async def test_invalid_mode_and_camel_case_output(backend: Backend) -> None:
    params = SearchDatasetDataParams.model_validate(
        {"queries": ["Eiffel Tower"], "datasetIds": ["ds"], "searchMode": "nonsense"}
    )
    res = await search_dataset_data(
        params,
        embedder=backend.embedder,
        full_text_index=backend.text,
        vector_index=backend.vectors,
        chunk_store=backend.store,
    )
    assert res.search_mode == "embedding"
    wire = res.model_dump(mode="json")
    assert {"searchRes", "cutRes", "usingReRank", "usingSimilarityFilter", "embeddingTokens"} <= wire.keys()
    item = wire["searchRes"][0]
    assert item["id"] == "d4" and item["collectionId"] == "c2"
    assert item["score"][0] == {"type": "embedding", "value": item["score"][0]["value"], "index": 0}
    assert item["trace"]["cutBy"] is None
