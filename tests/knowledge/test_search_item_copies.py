"""A search copies its items at every stage (``SearchDataItem.traced``, ``copy_with``) without validation:
the copies must be what a validated model with the same fields is, and leave the item copied unchanged."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from fathom.knowledge.search.types import SearchDataItem, SearchScore, TraceEntry, items_of, items_to_wire

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


@given(
    steps=st.lists(st.tuples(entries, st.booleans(), st.none() | scores), max_size=3),
    qs=st.lists(st.text(max_size=10), min_size=0, max_size=4),
    image=st.none() | st.text(max_size=5),
)
def test_a_list_of_items_turns_to_json_and_back_as_each_item_does(
    steps: list[tuple[TraceEntry, bool, list[SearchScore] | None]], qs: list[str], image: str | None
) -> None:
    """A search node's quotes go out (``items_to_wire``) and an AI chat node's come in (``items_of``) in
    one pass each: the same JSON as each item's own dump, the same items as each one's validation."""
    items = []
    for n, q in enumerate(qs):
        item = SearchDataItem(id=f"d{n}", q=q, datasetId="ds", imageId=image)
        for entry, cut, new_scores in steps:
            item = item.traced(entry, cut=cut, scores=new_scores)
        items.append(item)
    for exclude_none in (False, True):
        each = [i.model_dump(by_alias=True, mode="json", exclude_none=exclude_none) for i in items]
        assert items_to_wire(items, exclude_none=exclude_none) == each
    without = [i.model_dump(by_alias=True, mode="json", exclude={"trace"}) for i in items]
    assert items_to_wire(items, trace=False) == without
    wire = items_to_wire(items)
    assert items_of(wire) == [SearchDataItem.of(w) for w in wire] == items
    assert items_of(items) == items  # models pass as they are
