"""mixedRecall's fusion rule (``fathom.knowledge.search.hybrid``): the default fusion, coverage-scaled
weights, and their properties."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from fathom.knowledge.search.fusion import ConvexInput
from fathom.knowledge.search.fusion import convex_combination as fused_items
from fathom.knowledge.search.hybrid import (
    COVERAGE_EXPONENT,
    DEFAULT_FUSION,
    FusionPlan,
    _leg_weights,
    _resolve_fusion,
    query_coverage,
)
from fathom.knowledge.search.hybrid import (
    fuse_legs as fused_legs,
)
from fathom.knowledge.search.rrf import RrfInput, dataset_search_result_concat
from fathom.knowledge.search.types import SearchDataItem, SearchScore


def convex_combination(*args: Any, **kwargs: Any) -> list[SearchDataItem]:
    """The fused items as a list (``fusion.convex_combination`` makes them one at a time)."""
    return list(fused_items(*args, **kwargs))


def fuse_legs(*args: Any, **kwargs: Any) -> list[SearchDataItem]:
    """The fused items as a list (``hybrid.fuse_legs`` makes them one at a time)."""
    return list(fused_legs(*args, **kwargs))


weights = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
coverages = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
exponents = st.one_of(st.floats(min_value=0.0, max_value=20.0, allow_nan=False), st.just(math.inf))


def _leg(ids: list[str], score_type: str) -> list[SearchDataItem]:
    return [
        SearchDataItem(
            id=data_id,
            q=f"chunk {data_id}",
            score=[SearchScore(type=score_type, value=float(len(ids) - rank), index=rank)],  # type: ignore[arg-type]
        )
        for rank, data_id in enumerate(ids)
    ]


leg_ids = st.lists(st.sampled_from([f"d{i}" for i in range(12)]), min_size=1, max_size=10, unique=True)


def test_resolve_fusion() -> None:
    assert _resolve_fusion("rrf") == FusionPlan("rrf", coverage_aware=False)
    assert _resolve_fusion("convex") == FusionPlan("convex", coverage_aware=True)
    for other in (None, "", "linear"):
        assert _resolve_fusion(other) == FusionPlan(DEFAULT_FUSION, coverage_aware=True)


def test_leg_weights_examples() -> None:
    assert _leg_weights(0.5, None) == (0.5, 0.5)
    assert _leg_weights(0.5, 1.0) == (0.5, 0.5)
    embedding, full_text = _leg_weights(0.5, 0.36, 4.0)
    assert embedding == 0.5 * 0.36**4 and math.isclose(embedding + full_text, 1.0)
    assert _leg_weights(0.5, 0.99, math.inf) == (0.0, 1.0)
    assert _leg_weights(1.0, 0.1) == (1.0, 0.0) and _leg_weights(0.0, 0.1) == (0.0, 1.0)


@given(weights, coverages, exponents)
def test_leg_weights_properties(weight: float, coverage: float, exponent: float) -> None:
    embedding, full_text = _leg_weights(weight, coverage, exponent)
    assert math.isclose(embedding + full_text, 1.0, abs_tol=1e-12)
    if 0 < weight < 1:
        assert 0 <= embedding <= weight  # coverage only ever takes weight from the embedding leg
    else:
        assert (embedding, full_text) == (weight, 1 - weight)  # a switched-off leg stays off
    assert _leg_weights(weight, 1.0, exponent) == (weight, 1 - weight)  # full coverage: no change


@given(weights, coverages, coverages, exponents)
def test_more_coverage_never_lowers_the_embedding_weight(
    weight: float, low: float, high: float, exponent: float
) -> None:
    low, high = min(low, high), max(low, high)
    assert _leg_weights(weight, low, exponent)[0] <= _leg_weights(weight, high, exponent)[0]


@given(leg_ids, leg_ids, st.floats(min_value=0.05, max_value=0.95))
def test_full_coverage_default_is_plain_convex_and_rrf_is_fastgpt(
    embedding_ids: list[str], full_text_ids: list[str], weight: float
) -> None:
    embedding, full_text = _leg(embedding_ids, "embedding"), _leg(full_text_ids, "fullText")
    default = fuse_legs(embedding, full_text, weight=weight, fusion=None, coverage=1.0)
    convex = convex_combination(
        [
            ConvexInput(weight, embedding, "embedding", "embedding"),
            ConvexInput(1 - weight, full_text, "fullText", "fullText"),
        ]
    )
    assert DEFAULT_FUSION == "convex"
    assert [i.id for i in default] == [i.id for i in convex]
    assert [i.score_of("rrf") for i in default] == [i.score_of("rrf") for i in convex]
    # ``fusion: "rrf"`` is FastGPT's formula with the weights as sent, whatever the coverage
    rrf = fuse_legs(embedding, full_text, weight=weight, fusion="rrf", coverage=0.1)
    fastgpt = dataset_search_result_concat(
        [RrfInput(weight, embedding, "embedding"), RrfInput(1 - weight, full_text, "fullText")]
    )
    assert [(i.id, i.score_of("rrf")) for i in rrf] == [(i.id, i.score_of("rrf")) for i in fastgpt]


@given(leg_ids, leg_ids, st.floats(min_value=0.0, max_value=0.999), st.sampled_from([None, "convex"]))
def test_an_unreadable_query_keeps_the_full_text_order(
    embedding_ids: list[str], full_text_ids: list[str], coverage: float, fusion: str | None
) -> None:
    embedding, full_text = _leg(embedding_ids, "embedding"), _leg(full_text_ids, "fullText")
    fused = fuse_legs(embedding, full_text, weight=0.5, fusion=fusion, coverage=coverage, exponent=math.inf)
    # the embedding leg gets weight 0 and is dropped: full text decides alone
    assert [i.id for i in fused] == full_text_ids


@given(leg_ids, leg_ids, st.floats(min_value=0.0, max_value=0.6))
def test_a_low_coverage_query_keeps_the_full_text_leg_on_top(
    embedding_ids: list[str], full_text_ids: list[str], coverage: float
) -> None:
    """With the chosen exponent, a query the model reads at most 60% of cannot lift an embedding-only hit
    above the full-text leg's best hit."""
    embedding, full_text = _leg(embedding_ids, "embedding"), _leg(full_text_ids, "fullText")
    fused = fuse_legs(embedding, full_text, weight=0.5, fusion=None, coverage=coverage)
    assert fused[0].id in full_text_ids[:2]
    dropped = _leg_weights(0.5, coverage)[0] == 0  # only when the model reads (next to) nothing
    assert {i.id for i in fused} == set(full_text_ids) | (set() if dropped else set(embedding_ids))


def test_scaled_weights_are_explained_in_the_trace() -> None:
    embedding, full_text = _leg(["a", "b"], "embedding"), _leg(["b", "c"], "fullText")
    fused = fuse_legs(embedding, full_text, weight=0.5, fusion=None, coverage=0.25)
    expected = 0.5 * 0.25**COVERAGE_EXPONENT
    for item in fused:
        detail = item.trace.stages[-1].detail or ""
        assert item.trace.stages[-1].stage == "convex"
        assert f"embeddingWeight 0.5→{expected:.4g}" in detail and "reads 25% of the query" in detail
    plain = fuse_legs(embedding, full_text, weight=0.5, fusion=None, coverage=1.0)
    assert all("reads" not in (i.trace.stages[-1].detail or "") for i in plain)


def test_a_single_leg_is_returned_unchanged_by_default() -> None:
    embedding = _leg(["a", "b"], "embedding")
    only = fuse_legs(embedding, [], weight=0.5, fusion=None, coverage=1.0)
    assert [(i.id, [s.type for s in i.score]) for i in only] == [("a", ["embedding"]), ("b", ["embedding"])]
    scored = fuse_legs(embedding, [], weight=0.5, fusion="convex", coverage=1.0)
    assert all(i.score_of("rrf") is not None for i in scored)  # explicit convex scores one list
    assert all(i.trace.stages[-1].stage == "convex" for i in scored)


class _Measured:
    def __init__(self, values: list[float]) -> None:
        self.values = values

    def token_coverage(self, texts: list[str]) -> list[float]:
        return self.values[: len(texts)]


def test_query_coverage() -> None:
    assert query_coverage(object(), ["q"]) is None  # the embedder cannot tell
    assert query_coverage(_Measured([0.2, 0.6]), ["a", "b"]) == 0.4
    assert query_coverage(_Measured([1.5, float("nan")]), ["a", "b"]) == 1.0
    assert query_coverage(_Measured([]), []) is None
