"""Convex-combination fusion: a hand-computed example per normalisation, the trace, and properties."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fathom.knowledge.search.fusion import ConvexInput, _normalize_scores
from fathom.knowledge.search.fusion import convex_combination as fused_items
from fathom.knowledge.search.types import SearchDataItem


def convex_combination(*args: Any, **kwargs: Any) -> list[SearchDataItem]:
    """The fused items as a list (``fusion.convex_combination`` makes them one at a time)."""
    return list(fused_items(*args, **kwargs))


def _item(data_id: str, score_type: str, value: float, rank: int = 0) -> SearchDataItem:
    return SearchDataItem.of(
        {
            "id": data_id,
            "q": f"text {data_id}",
            "score": [{"type": score_type, "value": value, "index": rank}],
        }
    )


def _legs(
    embedding: list[tuple[str, float]], full_text: list[tuple[str, float]], weight: float
) -> list[ConvexInput]:
    return [
        ConvexInput(
            weight,
            [_item(i, "embedding", v, r) for r, (i, v) in enumerate(embedding)],
            "embedding",
            "embedding",
        ),
        ConvexInput(
            1 - weight,
            [_item(i, "fullText", v, r) for r, (i, v) in enumerate(full_text)],
            "fullText",
            "fullText",
        ),
    ]


EMBEDDING = [("a", 0.8), ("b", 0.6), ("c", 0.2)]
FULL_TEXT = [("b", 10.0), ("d", 5.0)]


@pytest.mark.parametrize(
    ("normalization", "weight", "expected"),
    [
        # TMM: cosine from -1 (span 1.8), BM25 from 0 (span 10)
        ("tmm", 0.5, {"b": 0.5 * 1.6 / 1.8 + 0.5, "a": 0.5, "c": 0.5 * 1.2 / 1.8, "d": 0.25}),
        # min-max: cosine from 0.2 (span 0.6), BM25 from 5 (span 5); c and d tie at 0, embedding weighs more
        ("minmax", 0.5, {"b": 0.5 * 0.4 / 0.6 + 0.5, "a": 0.5, "c": 0.0, "d": 0.0}),
        # ... and with full text weighing more, d (full text #2) goes before c (not in full text)
        ("minmax", 0.3, {"b": 0.3 * 0.4 / 0.6 + 0.7, "a": 0.3, "d": 0.0, "c": 0.0}),
    ],
)
def test_hand_computed_example(normalization: str, weight: float, expected: dict[str, float]) -> None:
    fused = convex_combination(_legs(EMBEDDING, FULL_TEXT, weight), normalization=normalization)  # type: ignore[arg-type]
    assert [item.id for item in fused] == list(expected)
    for position, item in enumerate(fused):
        assert item.score_of("rrf") == pytest.approx(expected[item.id])
        convex = next(s for s in item.score if s.type == "rrf")
        assert convex.index == position
        entry = item.trace.stages[-1]
        assert (entry.stage, entry.rank) == ("convex", position)
        assert entry.score == pytest.approx(expected[item.id])


def test_raw_scores_merge_and_trace_names_both_legs() -> None:
    fused = convex_combination(_legs(EMBEDDING, FULL_TEXT, 0.5), normalization="tmm")
    b = fused[0]
    assert b.id == "b"
    assert b.score_of("embedding") == 0.6 and b.score_of("fullText") == 10.0
    assert [s.type for s in b.score] == ["embedding", "fullText", "rrf"]
    detail = b.trace.stages[-1].detail or ""
    assert "embedding#2 0.6→0.8889×0.5" in detail and "fullText#1 10→1.0000×0.5" in detail
    a = fused[1]
    assert "fullText missing→0" in (a.trace.stages[-1].detail or "")
    assert a.score_of("fullText") is None and [s.type for s in a.score] == ["embedding", "rrf"]


def test_normalize_scores_edges() -> None:
    assert _normalize_scores([], None) == []
    assert _normalize_scores([3.0, 3.0], None) == [1.0, 1.0]
    assert _normalize_scores([2.0], 0.0) == [1.0]
    assert _normalize_scores([4.0, 2.0, 0.0], None) == [1.0, 0.5, 0.0]
    # a value under the theoretical minimum (rounding) lowers the bound instead of leaving [0, 1]
    assert _normalize_scores([0.5, -1.0000001], -1.0) == [1.0, 0.0]


def test_empty_legs() -> None:
    assert convex_combination([]) == []
    assert convex_combination(_legs([], [], 0.5)) == []
    only = convex_combination(_legs(EMBEDDING, [], 0.5))
    assert [item.id for item in only] == ["a", "b", "c"]
    assert all(item.trace.stages[-1].stage == "convex" for item in only)


def test_an_id_repeated_within_a_list_counts_once_at_its_best_rank() -> None:
    legs = [
        ConvexInput(0.5, [_item("a", "embedding", 0.9), _item("a", "embedding", 0.1)], "embedding"),
        ConvexInput(0.5, [_item("b", "fullText", 1.0)], "fullText"),
    ]
    fused = convex_combination(legs, normalization="minmax")
    assert [item.id for item in fused] == ["a", "b"]
    assert fused[0].score_of("rrf") == pytest.approx(0.5)


# ---- properties -------------------------------------------------------------------------------------

_IDS = st.sampled_from([f"d{i}" for i in range(12)])
_COSINE = st.floats(min_value=-1.0, max_value=1.0, allow_nan=False)
_BM25 = st.floats(min_value=0.0, max_value=50.0, allow_nan=False)
_NORMALIZATION = st.sampled_from(["tmm", "minmax"])


def _ranked(values: st.SearchStrategy[float]) -> st.SearchStrategy[list[tuple[str, float]]]:
    """A recall list: distinct ids, scores in descending order (as a single-query leg returns them)."""
    return st.lists(st.tuples(_IDS, values), max_size=10, unique_by=lambda pair: pair[0]).map(
        lambda pairs: sorted(pairs, key=lambda pair: -pair[1])
    )


_WEIGHT = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(_ranked(_COSINE), _ranked(_BM25), _WEIGHT, _NORMALIZATION)
def test_output_is_a_permutation_of_the_union_with_scores_in_unit_range(
    embedding: list[tuple[str, float]], full_text: list[tuple[str, float]], weight: float, norm: str
) -> None:
    fused = convex_combination(_legs(embedding, full_text, weight), normalization=norm)  # type: ignore[arg-type]
    ids = [item.id for item in fused]
    assert sorted(ids) == sorted({i for i, _ in embedding} | {i for i, _ in full_text})
    values = [item.score_of("rrf") for item in fused]
    assert all(value is not None and 0.0 <= value <= 1.0 for value in values)
    assert values == sorted(values, reverse=True)  # type: ignore[type-var]
    assert [entry.index for item in fused for entry in item.score if entry.type == "rrf"] == list(
        range(len(fused))
    )


@settings(max_examples=200, deadline=None)
@given(_ranked(_COSINE), _ranked(_BM25), _NORMALIZATION)
def test_weight_one_keeps_embedding_order_and_weight_zero_full_text_order(
    embedding: list[tuple[str, float]], full_text: list[tuple[str, float]], norm: str
) -> None:
    only_embedding = [
        item.id for item in convex_combination(_legs(embedding, full_text, 1.0), normalization=norm)
    ]  # type: ignore[arg-type]
    assert only_embedding[: len(embedding)] == [i for i, _ in embedding]
    only_full_text = [
        item.id for item in convex_combination(_legs(embedding, full_text, 0.0), normalization=norm)
    ]  # type: ignore[arg-type]
    assert only_full_text[: len(full_text)] == [i for i, _ in full_text]


def _fused_score(fused: list[SearchDataItem], data_id: str) -> float:
    value = next(item for item in fused if item.id == data_id).score_of("rrf")
    assert value is not None
    return value


def _above(fused: list[SearchDataItem], data_id: str) -> set[str]:
    """Ids whose fused score is strictly above ``data_id``'s."""
    mine = _fused_score(fused, data_id)
    return {
        item.id
        for item in fused
        if (item.score_of("rrf") or 0.0) > mine
        and not math.isclose(item.score_of("rrf") or 0.0, mine, abs_tol=1e-12)
    }


@settings(max_examples=300, deadline=None)
@given(
    _ranked(_COSINE),
    _ranked(_BM25),
    _WEIGHT,
    _NORMALIZATION,
    st.booleans(),
    st.data(),
)
def test_monotonic_in_each_legs_score(
    embedding: list[tuple[str, float]],
    full_text: list[tuple[str, float]],
    weight: float,
    norm: str,
    raise_embedding: bool,
    data: st.DataObject,
) -> None:
    """Raising one item's score in one leg (others unchanged) never lowers its fused score, and no item
    that was not above it before gets above it."""
    leg = embedding if raise_embedding else full_text
    if not leg:
        return
    position = data.draw(st.integers(0, len(leg) - 1))
    data_id, old = leg[position]
    top = 1.0 if raise_embedding else 50.0
    new = data.draw(st.floats(min_value=old, max_value=top, allow_nan=False))
    raised = sorted([*leg[:position], (data_id, new), *leg[position + 1 :]], key=lambda pair: -pair[1])
    before = convex_combination(_legs(embedding, full_text, weight), normalization=norm)  # type: ignore[arg-type]
    after = convex_combination(
        _legs(raised, full_text, weight) if raise_embedding else _legs(embedding, raised, weight),
        normalization=norm,  # type: ignore[arg-type]
    )
    assert _fused_score(after, data_id) >= _fused_score(before, data_id) - 1e-12
    assert _above(after, data_id) <= _above(before, data_id)
