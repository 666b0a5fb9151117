"""A search copies its items at every stage (``SearchDataItem.traced``, ``copy_with``) without validation:
the copies must be what a validated model with the same fields is, and leave the item copied unchanged."""

from __future__ import annotations

from datetime import UTC
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from fathom.knowledge.search.types import SearchDataItem, SearchScore, TraceEntry

STAGES = ["embeddingRecall", "fullTextRecall", "rrf", "convex", "dedupe", "similarity", "tokenBudget"]
entries = st.builds(
    TraceEntry,
    stage=st.sampled_from(STAGES),
    score=st.none() | st.floats(allow_nan=False),
    rank=st.none() | st.integers(0, 200),
    passed=st.booleans(),
    detail=st.none() | st.text(max_size=20),
)
scores = st.lists(
    st.builds(
        SearchScore,
        type=st.sampled_from(["embedding", "fullText", "reRank", "rrf"]),
        value=st.floats(allow_nan=False),
        index=st.integers(0, 200),
    ),
    max_size=3,
)


@given(
    steps=st.lists(st.tuples(entries, st.booleans(), st.none() | scores), min_size=1, max_size=5),
    q=st.text(max_size=30),
)
def test_traced_copies_are_the_validated_item_and_leave_the_original_alone(
    steps: list[tuple[TraceEntry, bool, list[SearchScore] | None]], q: str
) -> None:
    item = SearchDataItem(id="d1", q=q, datasetId="ds")
    before = item.model_dump()
    expected = item.model_dump(by_alias=True)
    current = item
    for entry, cut, new_scores in steps:
        current = current.traced(entry, cut=cut, scores=new_scores)
        trace = expected["trace"]
        trace["stages"] = [*trace["stages"], entry.model_dump(by_alias=True)]
        trace["cutBy"] = entry.stage if cut else trace["cutBy"]
        if new_scores is not None:
            expected["score"] = [s.model_dump(by_alias=True) for s in new_scores]
    assert current.model_dump(by_alias=True) == expected
    assert SearchDataItem.model_validate(expected).model_dump(by_alias=True) == expected
    assert item.model_dump() == before  # the copied item keeps its trace and scores
    assert {"trace"} <= current.model_fields_set and "id" in current.model_fields_set
    assert "a" not in current.model_dump(by_alias=True, exclude_unset=True)  # unset fields stay unset


texts = st.text(max_size=20)
rows = st.fixed_dictionaries(
    {"id": texts, "q": texts},
    optional={
        "a": texts,
        "dataset_id": texts,
        "collection_id": texts,
        "source_name": texts,
        "source_id": st.none() | texts,
        "chunk_index": st.integers(0, 10_000),
        "update_time": st.none() | st.datetimes(timezones=st.just(UTC)),
        "indexes": st.none() | st.lists(st.fixed_dictionaries({"type": texts, "text": texts}), max_size=2),
        "tokens": st.none() | st.integers(0, 5000),
    },
)


@given(row=rows)
def test_a_trusted_item_is_the_validated_item(row: dict[str, Any]) -> None:
    """A chunk row becomes a result item without validation (``ChunkStoreAdapter``): the same item, with
    the same fields set, its own empty score list and trace."""
    trusted = SearchDataItem.trusted(**row)
    validated = SearchDataItem(**row)
    assert trusted == validated and trusted.model_dump(by_alias=True) == validated.model_dump(by_alias=True)
    assert trusted.model_fields_set == validated.model_fields_set
    other = SearchDataItem.trusted(**row)
    assert other.score is not trusted.score and other.trace is not trusted.trace  # nothing shared
    assert other.trace.stages is not trusted.trace.stages


@given(entry=entries, value=st.floats(allow_nan=False), index=st.integers(0, 200))
def test_trusted_scores_and_trace_entries_are_the_validated_ones(
    entry: TraceEntry, value: float, index: int
) -> None:
    fields = {name: getattr(entry, name) for name in entry.model_fields_set}
    assert TraceEntry.trusted(**fields) == TraceEntry(**fields)
    assert TraceEntry.trusted(**fields).model_dump() == entry.model_dump()
    score = SearchScore.trusted(type="rrf", value=value, index=index)
    assert score == SearchScore(type="rrf", value=value, index=index)
