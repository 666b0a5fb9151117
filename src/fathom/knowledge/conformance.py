"""Conformance checks every ``FullTextIndex`` / ``VectorIndex`` backend must pass.

Call them from a backend's tests with a fresh, empty index (plain ``assert``s, no test framework
needed)::

    await check_full_text_index(SqlFullTextIndex(db, segment=segment_for_index))
    await check_vector_index(SqlVectorIndex(db), prepare=create_chunk_rows)

``prepare`` (optional) is awaited with the records before they are added, so a backend whose index
rows reference chunk rows can create them (``(data_id, dataset_id, collection_id)`` are in the records).

The in-memory reference implementations pass them (``tests/knowledge/test_memory_index.py``).
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Sequence

from fathom.knowledge.ports import FullTextIndex, SearchScope, TextRecord, VectorIndex, VectorRecord

_DS = "conformance-ds"
_OTHER_DS = "conformance-other"


def _scope(**kwargs: object) -> SearchScope:
    return SearchScope(dataset_ids=frozenset({_DS}), **kwargs)  # type: ignore[arg-type]


async def check_full_text_index(
    index: FullTextIndex, *, prepare: Callable[[Sequence[TextRecord]], Awaitable[None]] | None = None
) -> None:
    """Ranking, Chinese words, scope, limit and delete (one text row per chunk, as FastGPT keeps)."""
    records = [
        TextRecord("t1", _DS, "c1", "the cat sat on the mat"),
        TextRecord("t2", _DS, "c1", "the dog chased the cat and the cat ran away"),
        TextRecord("t3", _DS, "c2", "weather report for today"),
        TextRecord("t4", _DS, "c2", "知识库检索结合全文检索和向量检索, about a cat"),
        TextRecord("t5", _OTHER_DS, "c9", "cat cat cat in another knowledge base"),
    ]
    if prepare is not None:
        await prepare(records)
    await index.add(records)
    hits = await index.search("cat", 10, _scope())
    ids = [data_id for data_id, _ in hits]
    assert ids[:2] == ["t2", "t1"], hits  # more occurrences of a rare term rank first
    assert "t5" not in ids, "another knowledge base leaked into the results"
    assert all(a[1] >= b[1] for a, b in zip(hits, hits[1:], strict=False)), "hits must be best first"
    assert len(ids) == len(set(ids)), "a chunk must appear once"
    assert [d for d, _ in await index.search("全文检索", 10, _scope())] == ["t4"], "Chinese words must match"
    assert [d for d, _ in await index.search("cat", 1, _scope())] == ["t2"], "limit"
    only_c2 = await index.search("cat", 10, _scope(collection_ids=frozenset({"c2"})))
    assert {d for d, _ in only_c2} <= {"t3", "t4"}
    excluded = await index.search("cat", 10, _scope(exclude_collection_ids=frozenset({"c1"})))
    assert not {"t1", "t2"} & {d for d, _ in excluded}
    assert await index.search("cat", 10, _scope(collection_ids=frozenset())) == []
    assert await index.search("zebra", 10, _scope()) == []
    assert await index.delete(collection_ids={"c1"}) == 2
    assert "t1" not in [d for d, _ in await index.search("cat", 10, _scope())]
    assert await index.delete(data_ids={"t4"}) == 1
    assert await index.search("全文检索", 10, _scope()) == []


def _unit(angle: float) -> list[float]:
    return [math.cos(angle), math.sin(angle), 0.0]


async def check_vector_index(
    index: VectorIndex, *, prepare: Callable[[Sequence[VectorRecord]], Awaitable[None]] | None = None
) -> None:
    """Exact cosine order and values, best row per chunk, scope, limit and delete."""
    records = [
        VectorRecord("v1", "a", _DS, "c1", _unit(0.0), "m"),
        VectorRecord("v2", "a", _DS, "c1", _unit(1.2), "m"),
        VectorRecord("v3", "b", _DS, "c2", [0.0, 3.0, 0.0], "m"),  # not unit length: cosine ignores norm
        VectorRecord("v4", "c", _DS, "c2", _unit(math.pi), "m"),
        VectorRecord("v5", "d", _OTHER_DS, "c9", _unit(0.0), "m"),
    ]
    if prepare is not None:
        await prepare(records)
    await index.add(records)
    hits = await index.search(_unit(0.0), 10, _scope())
    assert [d for d, _ in hits] == ["a", "b", "c"], hits
    expected = {"a": 1.0, "b": 0.0, "c": -1.0}
    for data_id, score in hits:
        assert abs(score - expected[data_id]) < 1e-3, (data_id, score)
    assert [d for d, _ in await index.search(_unit(1.5), 10, _scope())][:2] == ["b", "a"]
    assert [d for d, _ in await index.search(_unit(0.0), 1, _scope())] == ["a"], "limit"
    only_c2 = await index.search(_unit(0.0), 10, _scope(collection_ids=frozenset({"c2"})))
    assert [d for d, _ in only_c2] == ["b", "c"]
    excluded = await index.search(_unit(0.0), 10, _scope(exclude_collection_ids=frozenset({"c2"})))
    assert [d for d, _ in excluded] == ["a"]
    assert await index.delete(data_ids={"a"}) == 2
    assert await index.delete(collection_ids={"c2"}) == 2
    assert await index.search(_unit(0.0), 10, _scope()) == []
