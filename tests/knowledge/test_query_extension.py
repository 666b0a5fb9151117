"""Query extension (spec §5.7): output parsing and lazy-greedy selection (k <= 3, alpha 0.3)."""

from __future__ import annotations

import math

from fathom.knowledge.search import parse_query_extension_output
from fathom.knowledge.search.query_extension import _build_extended_queries, _cosine, _lazy_greedy_select


def test_parse_takes_first_bracket_to_last_bracket() -> None:
    text = 'Sure! Here: ["how to reset password", "recover account"] hope that [helps]'
    assert parse_query_extension_output('x ["a", "b"] y') == ["a", "b"]
    assert parse_query_extension_output(text) == []  # "[...] hope that [helps]" is not JSON


def test_parse_tolerates_json5_quotes_and_trailing_commas() -> None:
    assert parse_query_extension_output("['one', 'two',]") == ["one", "two"]


def test_parse_without_array_or_with_empty_array_gives_nothing() -> None:
    assert parse_query_extension_output("no brackets") == []
    assert parse_query_extension_output("[]") == []
    assert parse_query_extension_output('{"a": 1}') == []


def test_cosine_of_zero_vector_is_zero() -> None:
    assert _cosine([0, 0], [1, 0]) == 0.0


def _unit(angle: float) -> list[float]:
    return [math.cos(angle), math.sin(angle)]


def test_first_pick_is_the_most_relevant() -> None:
    original = _unit(0)
    candidates = [_unit(0.5), _unit(0.05), _unit(1.2), _unit(0.06)]
    assert _lazy_greedy_select(original, candidates)[0] == 1


def test_selection_is_capped_at_three_and_at_the_candidate_count() -> None:
    original = _unit(0)
    assert len(_lazy_greedy_select(original, [_unit(i / 10) for i in range(8)])) == 3
    assert len(_lazy_greedy_select(original, [_unit(0.1)])) == 1
    assert _lazy_greedy_select(original, []) == []
    assert _lazy_greedy_select(original, [_unit(0.1)], k=0) == []


def test_stale_gain_is_accepted_when_the_fresh_gain_is_not_lower() -> None:
    # FastGPT's rule: after c0 is chosen, c2 (a copy of c0) is popped with stale gain 0.3*1 and a fresh
    # gain of 0.3*1 + (1 - 1) = 0.3 >= 0.3, so it is accepted before the orthogonal c1 (fresh gain 1.0)
    # is ever recomputed. With alpha 0.3 and diversity weight 1 the selection is the relevance order.
    original = [1.0, 0.0]
    chosen = _lazy_greedy_select(original, [[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]], k=2)
    assert chosen == [0, 2]


def test_selection_order_is_relevance_order() -> None:
    original = _unit(0)
    angles = [0.9, 0.1, 1.4, 0.3, 0.2]
    chosen = _lazy_greedy_select(original, [_unit(a) for a in angles])
    assert chosen == [1, 4, 3]


def test_extended_queries_dedupe_by_letters_and_digits_and_join_for_rerank() -> None:
    ext = _build_extended_queries(
        "Reset password?", ["reset password", "Reset, password!", "recover account"]
    )
    assert ext.search_queries == ["Reset password?", "reset password", "recover account"]
    assert ext.re_rank_query == "Reset password?\nreset password\nrecover account"
    assert _build_extended_queries("only", []).re_rank_query == "only"
