"""``fusion: "convex"`` through search_dataset_data: in-memory indexes and the local embedder."""

from __future__ import annotations

from typing import Any

import pytest

from fathom.knowledge.memory_index import MemoryChunkStore, MemoryFullTextIndex, MemoryVectorIndex
from fathom.knowledge.ports import TextRecord, VectorRecord
from fathom.knowledge.search import SearchDatasetDataParams, SearchDatasetDataResponse, search_dataset_data
from fathom.llm.local_embedding import LocalEmbedder

CORPUS = [
    "Vitamin D deficiency is linked to weaker bones and a higher risk of fractures.",
    "Calcium and vitamin D supplements are often given to older adults to protect bone density.",
    "Regular aerobic exercise lowers resting blood pressure in adults with hypertension.",
    "Smoking increases the risk of lung cancer and heart disease.",
    "The Eiffel Tower in Paris was completed in 1889 for the World's Fair.",
    "Photosynthesis converts light energy into chemical energy in plants.",
    "Bone fractures in older adults often follow a fall at home.",
]


class Backend:
    def __init__(self, embedder: LocalEmbedder) -> None:
        self.embedder = embedder
        self.text = MemoryFullTextIndex()
        self.vectors = MemoryVectorIndex()
        self.store = MemoryChunkStore()

    async def load(self) -> None:
        vectors = await self.embedder.embed(CORPUS)
        for i, (text, vector) in enumerate(zip(CORPUS, vectors, strict=True)):
            await self.text.add([TextRecord(f"d{i}", "ds", "c1", text)])
            await self.vectors.add(
                [VectorRecord(f"v{i}", f"d{i}", "ds", "c1", vector, self.embedder.model_id)]
            )
        self.store.put(
            [{"id": f"d{i}", "q": t, "datasetId": "ds", "collectionId": "c1"} for i, t in enumerate(CORPUS)]
        )

    async def search(self, **params: Any) -> SearchDatasetDataResponse:
        base: dict[str, Any] = {
            "queries": ["vitamin D and bone fractures"],
            "datasetIds": ["ds"],
            "searchMode": "mixedRecall",
        }
        return await search_dataset_data(
            {**base, **params},
            embedder=self.embedder,
            full_text_index=self.text,
            vector_index=self.vectors,
            chunk_store=self.store,
        )


@pytest.fixture
async def backend(local_embedder: LocalEmbedder) -> Backend:
    b = Backend(local_embedder)
    await b.load()
    return b


def test_fusion_is_optional_on_the_wire() -> None:
    params = SearchDatasetDataParams.model_validate({"queries": ["q"]})
    assert params.fusion is None and params.convex_normalization == "minmax"
    assert SearchDatasetDataParams.model_validate({"queries": ["q"], "fusion": "convex"}).fusion == "convex"


async def test_convex_fusion_scores_and_traces_every_item(backend: Backend) -> None:
    res = await backend.search(fusion="convex")
    assert res.search_res
    # the fused score keeps FastGPT's type (rrf); the trace's stage says the convex formula made it
    values = [item.score_of("rrf") for item in res.search_res]
    assert all(v is not None and 0 <= v <= 1 for v in values)
    assert values == sorted(values, reverse=True)  # type: ignore[type-var]
    for position, item in enumerate(res.search_res):
        assert [s.type for s in item.score].count("rrf") == 1
        (entry,) = [e for e in item.trace.stages if e.stage == "convex"]
        assert entry.rank == position and entry.score == item.score_of("rrf")
        assert "embedding#" in (entry.detail or "") or "fullText#" in (entry.detail or "")
    top = res.search_res[0]
    assert top.id == "d0"
    assert {s.type for s in top.score} == {"embedding", "fullText", "rrf"}
    assert [e.stage for e in top.trace.stages][:3] == ["embeddingRecall", "fullTextRecall", "convex"]


async def test_no_fusion_or_an_unknown_one_is_the_default_and_rrf_is_fastgpts(backend: Backend) -> None:
    default = await backend.search()
    unknown = await backend.search(fusion="something-else")
    convex = await backend.search(fusion="convex")
    # an English query is read whole by MiniLM: the default is plain convex min-max at the sent weight
    assert [i.id for i in default.search_res] == [i.id for i in unknown.search_res]
    assert [i.id for i in default.search_res] == [i.id for i in convex.search_res]
    stages = [{e.stage for e in i.trace.stages} for i in default.search_res]
    assert all("convex" in s and "rrf" not in s for s in stages)
    rrf = await backend.search(fusion="rrf")
    stages = [{e.stage for e in i.trace.stages} for i in rrf.search_res]
    assert all("rrf" in s and "convex" not in s for s in stages)
    # either way the fused score is typed as FastGPT types it
    assert all(i.score_of("rrf") is not None for i in [*default.search_res, *rrf.search_res])


async def test_convex_weights_at_the_ends_follow_one_leg(backend: Backend) -> None:
    embedding_only = await backend.search(searchMode="embedding", similarity=None)
    vectors = await backend.search(fusion="convex", embeddingWeight=1.0)
    # weight 1 drops the full-text leg as RRF does; the embedding leg keeps its order and gets scored
    assert [i.id for i in vectors.search_res] == [i.id for i in embedding_only.search_res][:80]
    assert all(i.score_of("fullText") is None and i.score_of("rrf") is not None for i in vectors.search_res)
    full_text_only = await backend.search(searchMode="fullTextRecall")
    full_text = await backend.search(fusion="convex", embeddingWeight=0.0)
    assert [i.id for i in full_text.search_res] == [i.id for i in full_text_only.search_res][:60]
    assert all(i.score_of("embedding") is None for i in full_text.search_res)


@pytest.mark.parametrize("normalization", ["tmm", "minmax"])
async def test_convex_value_is_the_weighted_sum_of_normalised_leg_scores(
    backend: Backend, normalization: str
) -> None:
    res = await backend.search(fusion="convex", embeddingWeight=0.7, convexNormalization=normalization)
    items = res.search_res
    cosines = {i.id: i.score_of("embedding") for i in items if i.score_of("embedding") is not None}
    bm25 = {i.id: i.score_of("fullText") for i in items if i.score_of("fullText") is not None}
    assert len(cosines) == len(CORPUS) and 0 < len(bm25) < len(CORPUS)
    low_e = -1.0 if normalization == "tmm" else min(cosines.values())  # type: ignore[type-var]
    low_f = 0.0 if normalization == "tmm" else min(bm25.values())  # type: ignore[type-var]
    high_e, high_f = max(cosines.values()), max(bm25.values())  # type: ignore[type-var]
    for item in items:
        e = (cosines[item.id] - low_e) / (high_e - low_e)  # type: ignore[operator]
        f = (bm25[item.id] - low_f) / (high_f - low_f) if item.id in bm25 else 0.0  # type: ignore[operator]
        assert item.score_of("rrf") == pytest.approx(0.7 * e + 0.3 * f)
