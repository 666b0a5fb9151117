"""Recall limits, dedupe, similarity filter and token budgets (spec §5.3.3, §5.6)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fathom.knowledge.search import (
    SearchDataItem,
    count_recall_limit,
    dedupe_results,
    filter_by_max_tokens,
    filter_by_similarity,
    filter_search_results_by_max_chars,
    normalize_search_mode,
    similarity_score_type,
)
from fathom.knowledge.text import letters_and_digits


def _item(data_id: str, q: str = "", a: str = "", **scores: float) -> SearchDataItem:
    return SearchDataItem.of(
        {
            "id": data_id,
            "q": q or f"q{data_id}",
            "a": a,
            "score": [{"type": t, "value": v, "index": 0} for t, v in scores.items()],
        }
    )


@pytest.mark.parametrize(
    ("mode", "limits"),
    [("embedding", (100, 0)), ("fullTextRecall", (0, 100)), ("mixedRecall", (80, 60)), ("bogus", (100, 0))],
)
def test_count_recall_limit(mode: str, limits: tuple[int, int]) -> None:
    assert count_recall_limit(mode) == limits


def test_invalid_search_mode_falls_back_to_embedding() -> None:
    assert normalize_search_mode("hybrid") == "embedding"
    assert normalize_search_mode(None) == "embedding"


def test_dedupe_ignores_punctuation_and_spacing_and_keeps_the_first() -> None:
    kept, cut = dedupe_results(
        [_item("1", "Hello, world!", "A"), _item("2", "hello world", "a"), _item("3", "Hello world", "A.")]
    )
    assert [i.id for i in kept] == ["1", "2"]  # letters are case-sensitive, as in FastGPT
    assert [i.id for i in cut] == ["3"]
    assert cut[0].trace.cut_by == "dedupe"


def test_dedupe_never_collapses_distinct_images() -> None:
    a = _item("1", "same").model_copy(update={"image_id": "img1"})
    b = _item("2", "same").model_copy(update={"image_id": "img2"})
    kept, _ = dedupe_results([a, b])
    assert len(kept) == 2


def _dedupe_by_full_key(items: list[SearchDataItem]) -> tuple[list[str], list[tuple[str, str]]]:
    """The rule itself: the first item of each (letters and digits of q + a, image id) is kept, each later
    one is cut naming it."""
    first: dict[tuple[str, str], str] = {}
    kept, cut = [], []
    for item in items:
        key = (letters_and_digits(item.q + (item.a or "")), item.image_id or "")
        if key in first:
            cut.append((item.id, first[key]))
        else:
            first[key] = item.id
            kept.append(item.id)
    return kept, cut


# texts that collide on their ASCII letters and digits and differ (or not) in the others
_PIECES = st.sampled_from(["Hello", "hello", " ", ",", "é", "É", "知识", "库", "β", "1", "١", "_", "-", "ok"])


@given(
    st.lists(
        st.tuples(st.lists(_PIECES, max_size=6), st.lists(_PIECES, max_size=3), st.booleans()), max_size=12
    )
)
def test_dedupe_keeps_the_first_of_each_full_key_whatever_the_ascii_keys_share(
    rows: list[tuple[list[str], list[str], bool]],
) -> None:
    items = [
        _item(str(n), "".join(q) or "x", "".join(a)).model_copy(update={"image_id": "img" if image else None})
        for n, (q, a, image) in enumerate(rows)
    ]
    kept, cut = dedupe_results(items)
    expected_kept, expected_cut = _dedupe_by_full_key(items)
    assert [item.id for item in kept] == expected_kept
    assert [
        (item.id, (item.trace.stages[-1].detail or "").removeprefix("same text as ")) for item in cut
    ] == (expected_cut)


@pytest.mark.parametrize(
    ("mode", "rerank", "expected"),
    [
        ("embedding", False, "embedding"),
        ("mixedRecall", False, None),
        ("fullTextRecall", False, None),
        ("mixedRecall", True, "reRank"),
        ("embedding", True, "reRank"),
    ],
)
def test_similarity_filter_score_type(mode: str, rerank: bool, expected: str | None) -> None:
    assert similarity_score_type(mode, rerank) == expected


def test_filters_without_cut_items_keep_the_same_items_with_the_same_traces() -> None:
    """A search that shows no removed item (a workflow's search node) neither traces nor returns them."""
    dups = [_item("1", "Hello, world!", "A"), _item("2", "hello world", "a"), _item("3", "Hello world", "A.")]
    kept, cut = dedupe_results(dups, keep_cut=False)
    assert cut == [] and kept == dedupe_results(dups)[0]
    scored = [_item("pos", embedding=0.2), _item("none"), _item("neg", embedding=-0.05)]
    kept, cut = filter_by_similarity(scored, 0, "embedding", keep_cut=False)
    assert cut == [] and kept == filter_by_similarity(scored, 0, "embedding")[0]
    assert [i.id for i in kept] == ["pos", "none"] and kept[0].trace.stages[-1].stage == "similarity"


def test_similarity_zero_is_a_threshold() -> None:
    items = [_item("pos", embedding=0.2), _item("zero", embedding=0.0), _item("neg", embedding=-0.05)]
    kept, cut = filter_by_similarity(items, 0, "embedding")
    assert [i.id for i in kept] == ["pos", "zero"]
    assert [i.id for i in cut] == ["neg"]
    assert cut[0].trace.cut_by == "similarity"
    assert cut[0].trace.stages[-1].score == -0.05


def test_similarity_none_disables_the_filter() -> None:
    items = [_item("neg", embedding=-0.5)]
    assert filter_by_similarity(items, None, "embedding")[0] == items


def test_items_without_the_score_type_are_kept() -> None:
    kept, cut = filter_by_similarity([_item("ft", fullText=3.0), _item("rr", reRank=0.1)], 0.5, "reRank")
    assert [i.id for i in kept] == ["ft"]
    assert [i.id for i in cut] == ["rr"]


def _words(n: int) -> str:
    return " ".join(["w"] * n)


def count(text: str) -> int:
    return len(text.split())


def test_search_budget_includes_the_crossing_item() -> None:
    items = [_item(str(i), _words(40)) for i in range(5)]
    kept, cut = filter_by_max_tokens(items, 100, count)
    assert [i.id for i in kept] == ["0", "1", "2"]  # 40, 80, 120 > 100: the third is in
    assert [i.trace.cut_by for i in cut] == ["tokenBudget", "tokenBudget"]


def test_search_budget_without_cut_items_keeps_the_same_items_and_traces_nothing_else() -> None:
    items = [_item(str(i), _words(40)) for i in range(5)]
    kept, cut = filter_by_max_tokens(items, 100, count, keep_cut=False)
    full, _ = filter_by_max_tokens(items, 100, count)
    assert cut == [] and [i.model_dump() for i in kept] == [i.model_dump() for i in full]
    assert all(i.trace.stages == [] for i in items)  # the inputs are left as they were


def test_search_budget_exact_total_keeps_walking() -> None:
    items = [_item(str(i), _words(50)) for i in range(3)]
    kept, _ = filter_by_max_tokens(items, 100, count)
    assert [i.id for i in kept] == ["0", "1", "2"]


def test_workflow_budget_leaves_out_an_item_past_limit_plus_500() -> None:
    items = [_item("0", _words(90)), _item("1", _words(600)), _item("2", _words(5))]
    kept, cut = filter_search_results_by_max_chars(items, 100, count)
    assert [i.id for i in kept] == ["0"]
    assert [i.id for i in cut] == ["1", "2"]


def test_workflow_budget_includes_crossing_item_within_500() -> None:
    items = [_item("0", _words(90)), _item("1", _words(100)), _item("2", _words(5))]
    kept, _ = filter_search_results_by_max_chars(items, 100, count)
    assert [i.id for i in kept] == ["0", "1"]


def test_workflow_budget_keeps_the_first_item_when_nothing_fits() -> None:
    items = [_item("0", _words(900)), _item("1", _words(5))]
    kept, _ = filter_search_results_by_max_chars(items, 100, count)
    assert [i.id for i in kept] == ["0"]


@pytest.mark.parametrize(
    "sizes",
    [[90, 600, 5], [90, 100, 5], [900, 5], [10, 20, 30], []],
    ids=["past-500", "crossing", "first", "all", "none"],
)
def test_workflow_budget_without_traces_keeps_the_same_items_untouched(sizes: list[int]) -> None:
    """The AI chat node's budget (``trace=False``): the same items as the traced walk, as they came."""
    items = [_item(str(i), _words(n)) for i, n in enumerate(sizes)]
    kept, cut = filter_search_results_by_max_chars(items, 100, count, trace=False)
    traced, _ = filter_search_results_by_max_chars(items, 100, count)
    assert [i.id for i in kept] == [i.id for i in traced] and cut == []
    assert all(k is items[n] for n, k in enumerate(kept))


def test_token_budget_reads_a_stored_token_count_before_counting() -> None:
    stored = SearchDataItem(id="a", q="tiny", tokens=1000)
    counted = SearchDataItem(id="b", q="tiny")
    kept, cut = filter_by_max_tokens([stored, counted, SearchDataItem(id="c", q="x")], 999, lambda _: 1)
    assert [i.id for i in kept] == ["a"] and [i.id for i in cut] == ["b", "c"]  # 1000 > 999 at the first
    kept, _ = filter_by_max_tokens([counted, stored], 999, lambda _: 1)
    assert [i.trace.stages[-1].score for i in kept] == [1.0, 1001.0]
