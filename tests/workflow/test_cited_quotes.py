"""``cited_quotes``: FastGPT's ``totalQuoteList`` of an answer from its node responses (vectors below; the
loop case through the HTTP API is in ``tests/chat/test_fastgpt_apps_api.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from fathom.workflow.result import cited_quotes, flat_responses

A, B, C = {"id": "a"}, {"id": "b"}, {"id": "c"}


def search(*quotes: dict[str, str]) -> dict[str, Any]:
    return {"moduleType": "datasetSearchNode", "quoteList": list(quotes)}


CASES: list[tuple[str, list[Any], list[dict[str, str]]]] = [
    ("no nodes", [], []),
    ("a search node's quotes", [search(A, B)], [A, B]),
    ("two searches in order", [search(A), {"moduleType": "chatNode"}, search(B)], [A, B]),
    ("a loop's searches", [{"moduleType": "loop", "loopDetail": [search(A), search(B)]}], [A, B]),
    ("a tool call's searches", [{"moduleType": "tools", "toolDetail": [search(C)]}], [C]),
    (
        "a child app shown: its runs, not its roll-up again",
        [{"moduleType": "appModule", "quoteList": [A], "pluginDetail": [search(A)]}],
        [A],
    ),
    (
        "a child app hidden: its roll-up",
        [{"moduleType": "appModule", "quoteList": [A], "pluginDetail": None}],
        [A],
    ),
    (
        "a loop inside a child app",
        [{"moduleType": "appModule", "pluginDetail": [{"loopDetail": [search(B)]}]}],
        [B],
    ),
    ("empty and non-dict entries skipped", [None, "x", search(A, None), {"quoteList": None}], [A]),  # type: ignore[arg-type]
]


@pytest.mark.parametrize(("name", "responses", "expected"), CASES, ids=[c[0] for c in CASES])
def test_an_answers_quotes_are_its_searches_flattened(
    name: str, responses: list[Any], expected: list[dict[str, str]]
) -> None:
    assert cited_quotes(responses) == expected


def test_flat_responses_put_the_runs_inside_a_node_after_it() -> None:
    chat, search_node = {"moduleType": "chatNode"}, search(A)
    loop = {"moduleType": "loop", "loopDetail": [chat, "x"]}
    child = {"moduleType": "appModule", "pluginDetail": [loop], "toolDetail": None}
    assert flat_responses([child, search_node, None]) == [child, loop, chat, search_node]
