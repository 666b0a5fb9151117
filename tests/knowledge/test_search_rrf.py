"""Weighted RRF (spec §5.4): the test vector, the single-list short-circuit, score merging, properties."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fathom.knowledge.search import RrfInput, SearchDataItem, dataset_search_result_concat


def _item(data_id: str, *scores: tuple[str, float, int]) -> dict[str, object]:
    return {
        "id": data_id,
        "q": f"text {data_id}",
        "score": [{"type": t, "value": v, "index": i} for t, v, i in scores],
    }


def test_spec_vector_weighted_rrf_order_and_values() -> None:
    fused = dataset_search_result_concat([(0.5, [_item("a"), _item("b")]), (0.5, [_item("b"), _item("c")])])
    assert [item.id for item in fused] == ["b", "a", "c"]
    rrf = {item.id: item.score_of("rrf") for item in fused}
    assert rrf["a"] == 0.5 * (1 / 61)
    assert rrf["b"] == 0.5 * (1 / 62) + 0.5 * (1 / 61)  # list order: rank 2 in L1, then rank 1 in L2
    assert rrf["c"] == 0.5 * (1 / 62)
    assert (round(rrf["a"], 7), round(rrf["b"], 7), round(rrf["c"], 7)) == (0.0081967, 0.0162612, 0.0080645)
    assert [next(s.index for s in item.score if s.type == "rrf") for item in fused] == [0, 1, 2]


def test_single_list_is_returned_unchanged_without_rrf_score() -> None:
    items = [_item("a", ("embedding", 0.9, 0)), _item("b", ("embedding", 0.8, 1))]
    fused = dataset_search_result_concat([(0.5, items), (0.5, [])])
    assert [i.id for i in fused] == ["a", "b"]
    assert all(i.score_of("rrf") is None for i in fused)
    assert fused[0].score == SearchDataItem.of(items[0]).score


def test_no_lists_gives_empty() -> None:
    assert dataset_search_result_concat([(1.0, []), (0.3, [])]) == []


def test_repeated_ids_merge_scores_same_type_max_new_types_appended() -> None:
    left = [_item("x", ("embedding", 0.7, 0), ("rrf", 0.1, 0))]
    right = [_item("y"), _item("x", ("embedding", 0.9, 3), ("fullText", 5.0, 1))]
    fused = dataset_search_result_concat([RrfInput(0.5, left, "embedding"), RrfInput(0.5, right, "fullText")])
    x = next(i for i in fused if i.id == "x")
    types = [s.type for s in x.score]
    assert types == ["embedding", "fullText", "rrf"]
    assert x.score_of("embedding") == 0.9
    assert x.score_of("rrf") == 0.5 / 61 + 0.5 / 62
    assert x.q == "text x"
    rrf_entry = x.trace.stages[-1]
    assert (
        rrf_entry.stage == "rrf"
        and rrf_entry.rank == 0
        and rrf_entry.detail == "embedding#1×0.5 + fullText#2×0.5"
    )


def test_ties_keep_first_appearance_order() -> None:
    fused = dataset_search_result_concat([(1, [_item("p"), _item("q")]), (1, [_item("q"), _item("p")])])
    assert [i.id for i in fused] == ["p", "q"]


_ids = st.lists(st.sampled_from("abcdefghij"), unique=True, max_size=8)


@settings(max_examples=200, deadline=None)
@given(lists=st.lists(st.tuples(st.floats(0.05, 1.0), _ids), min_size=2, max_size=4), data=st.data())
def test_rrf_scores_do_not_depend_on_list_order(
    lists: list[tuple[float, list[str]]], data: st.DataObject
) -> None:
    inputs = [(w, [_item(i) for i in ids]) for w, ids in lists]
    shuffled = data.draw(st.permutations(inputs))
    nonempty = [ids for _, ids in lists if ids]
    if len(nonempty) < 2:
        return
    first = {i.id: i.score_of("rrf") for i in dataset_search_result_concat(inputs)}
    second = {i.id: i.score_of("rrf") for i in dataset_search_result_concat(shuffled)}
    assert first.keys() == second.keys()
    for key, value in first.items():
        assert abs(value - second[key]) < 1e-12  # type: ignore[operator]


@settings(max_examples=200, deadline=None)
@given(ids=_ids.filter(lambda x: len(x) >= 2), other=_ids, weight=st.floats(0.05, 1.0))
def test_rrf_score_is_monotone_in_rank(ids: list[str], other: list[str], weight: float) -> None:
    other = [i for i in other if i not in ids] or ["zz"]
    fused = dataset_search_result_concat(
        [(weight, [_item(i) for i in ids]), (0.5, [_item(i) for i in other])]
    )
    scores = {i.id: i.score_of("rrf") for i in fused}
    values = [scores[i] for i in ids]
    assert all(a > b for a, b in zip(values, values[1:], strict=False))  # type: ignore[operator]
    order = [i.id for i in fused]
    assert all(
        s >= t for s, t in zip([scores[i] for i in order], [scores[i] for i in order][1:], strict=False)
    )  # type: ignore[operator]
