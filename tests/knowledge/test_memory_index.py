"""In-memory reference indexes: BM25 over segmented text, exact cosine, scope and delete."""

from __future__ import annotations

from fathom.knowledge.memory_index import MemoryFullTextIndex, MemoryVectorIndex
from fathom.knowledge.ports import FullTextIndex, SearchScope, TextRecord, VectorIndex, VectorRecord
from fathom.knowledge.tokenize import segment, segment_for_index

SCOPE = SearchScope(dataset_ids={"ds"})


def test_memory_indexes_satisfy_the_protocols() -> None:
    assert isinstance(MemoryFullTextIndex(), FullTextIndex)
    assert isinstance(MemoryVectorIndex(), VectorIndex)


def test_chinese_is_segmented_into_words() -> None:
    assert segment("我爱北京天安门, Hello World!") == ["我", "爱", "北京", "天安门", "hello", "world"]
    assert segment_for_index("知识库检索") == " ".join(segment("知识库检索"))


async def test_bm25_ranks_by_term_rarity_and_frequency() -> None:
    index = MemoryFullTextIndex()
    await index.add(
        [
            TextRecord("1", "ds", "c1", "the cat sat on the mat"),
            TextRecord("2", "ds", "c1", "the dog chased the cat and the cat ran"),
            TextRecord("3", "ds", "c1", "the weather is nice today"),
            TextRecord("4", "ds", "c2", "北京的天气很好"),
        ]
    )
    hits = await index.search("cat", 10, SCOPE)
    assert [h[0] for h in hits] == ["2", "1"]
    assert hits[0][1] > hits[1][1] > 0
    assert [h[0] for h in await index.search("北京 天气", 10, SCOPE)] == ["4"]
    assert await index.search("cat", 10, SearchScope(dataset_ids={"ds"}, collection_ids={"c2"})) == []
    assert await index.search("cat", 10, SearchScope(dataset_ids={"other"})) == []


async def test_full_text_delete_by_collection_and_by_data_id() -> None:
    index = MemoryFullTextIndex()
    await index.add([TextRecord("1", "ds", "c1", "apple pie"), TextRecord("2", "ds", "c2", "apple tart")])
    assert await index.delete(collection_ids={"c1"}) == 1
    assert [h[0] for h in await index.search("apple", 5, SCOPE)] == ["2"]
    assert await index.delete(data_ids={"2"}) == 1
    assert await index.search("apple", 5, SCOPE) == []
    assert len(index) == 0


async def test_vector_search_is_exact_cosine_best_index_per_chunk() -> None:
    index = MemoryVectorIndex()
    await index.add(
        [
            VectorRecord("i1", "a", "ds", "c1", [1.0, 0.0]),
            VectorRecord("i2", "a", "ds", "c1", [0.6, 0.8]),
            VectorRecord("i3", "b", "ds", "c2", [0.0, 2.0]),
            VectorRecord("i4", "c", "ds", "c2", [-1.0, 0.0]),
        ]
    )
    hits = await index.search([0.0, 1.0], 10, SCOPE)
    assert [h[0] for h in hits] == ["b", "a", "c"]
    assert abs(hits[0][1] - 1.0) < 1e-6 and abs(hits[1][1] - 0.8) < 1e-6 and abs(hits[2][1]) < 1e-6
    assert [h[0] for h in await index.search([0.0, 1.0], 1, SCOPE)] == ["b"]
    excluded = SearchScope(dataset_ids={"ds"}, exclude_collection_ids={"c2"})
    assert [h[0] for h in await index.search([0.0, 1.0], 10, excluded)] == ["a"]
    assert await index.delete(data_ids={"a"}) == 2
    assert len(index) == 2


async def test_memory_full_text_index_passes_the_conformance_checks() -> None:
    from fathom.knowledge.conformance import check_full_text_index

    await check_full_text_index(MemoryFullTextIndex())


async def test_memory_vector_index_passes_the_conformance_checks() -> None:
    from fathom.knowledge.conformance import check_vector_index

    await check_vector_index(MemoryVectorIndex())
