"""Every if-else operator (FastGPT ``VariableConditionEnum``), and the branch handles it keeps."""

from __future__ import annotations

import math
from typing import Any

import pytest
from wf_builders import answer, cond, edge, group, if_else, start, workflow

from fathom.workflow import run_workflow
from fathom.workflow.nodes.if_else import CONDITIONS, _check_condition

CASES: list[tuple[str, Any, Any, bool]] = [
    ("isEmpty", None, "", True),
    ("isEmpty", "  ", "", True),
    ("isEmpty", [], "", True),
    ("isEmpty", {}, "", True),
    ("isEmpty", math.nan, "", True),
    ("isEmpty", 0, "", False),
    ("isEmpty", "x", "", False),
    ("isNotEmpty", "x", "", True),
    ("isNotEmpty", [], "", False),
    ("equalTo", " abc ", "abc", True),
    ("equalTo", 5, "5", True),
    ("equalTo", True, "true", True),
    ("equalTo", ["a", "b"], "a,b", True),
    ("equalTo", "abc", "abd", False),
    ("notEqual", "abc", "abd", True),
    ("notEqual", "abc", " abc", False),
    ("greaterThan", "10", "9", True),
    ("greaterThan", 9, 9, False),
    ("greaterThan", "abc", "1", False),
    ("greaterThanOrEqualTo", 9, "9", True),
    ("lessThan", "2", "10", True),
    ("lessThanOrEqualTo", 3, "2", False),
    ("include", "hello world", "lo w", True),
    ("include", ["a", 1, True], "1", True),
    ("include", ["a", "b"], "c", False),
    ("include", 12, "1", False),
    ("notInclude", "hello", "z", True),
    ("notInclude", ["x"], "x", False),
    ("startWith", "  hello", "he", True),
    ("startWith", "hello", "lo", False),
    ("startWith", 123, "1", False),
    ("endWith", "hello  ", "lo", True),
    ("endWith", "hello", "he", False),
    ("reg", "order-123", "/\\d+/", True),
    ("reg", "order", "^\\d+$", False),
    ("reg", 5, "5", False),
    ("reg", "x", "", False),
    ("lengthEqualTo", [1, 2], "2", True),
    ("lengthEqualTo", "abc", 3, True),
    ("lengthEqualTo", 5, "1", False),
    ("lengthNotEqualTo", [1], "2", True),
    ("lengthNotEqualTo", 5, "1", True),  # no length ⇒ "not equal" holds, as in JavaScript
    ("lengthGreaterThan", [1, 2, 3], "2", True),
    ("lengthGreaterThanOrEqualTo", "ab", "2", True),
    ("lengthLessThan", [], "1", True),
    ("lengthLessThanOrEqualTo", "abc", "2", False),
    ("unknownOperator", "a", "a", False),
]


@pytest.mark.parametrize(("condition", "left", "right", "expected"), CASES)
def test_condition_operator(condition: str, left: Any, right: Any, expected: bool) -> None:
    assert _check_condition(condition, left, right) is expected


def test_every_fastgpt_operator_is_covered() -> None:
    assert {c for c, *_ in CASES} >= set(CONDITIONS)
    assert len(CONDITIONS) == 19


def branches(groups: list[dict[str, Any]]) -> dict[str, Any]:
    return workflow(
        [start(), if_else("c", groups), answer("if", "IF"), answer("elif", "ELIF"), answer("else", "ELSE")],
        [
            edge("start", "c"),
            edge("c", "if", "IF"),
            edge("c", "elif", "ELSE IF 1"),
            edge("c", "else", "ELSE"),
        ],
        chatConfig={
            "variables": [
                {"key": "n", "label": "n", "type": "numberInput", "valueType": "number", "defaultValue": 0},
                {
                    "key": "limit",
                    "label": "limit",
                    "type": "numberInput",
                    "valueType": "number",
                    "defaultValue": 5,
                },
            ]
        },
    )


V = "VARIABLE_NODE_ID"
GROUPS = [
    group(cond([V, "n"], "greaterThan", [V, "limit"], "reference")),
    group(cond([V, "n"], "equalTo", "1"), cond([V, "n"], "equalTo", "2"), join="OR"),
]


@pytest.mark.parametrize(
    ("n", "answer_text", "result"), [(9, "\nIF", "IF"), (2, "\nELIF", "ELSE IF 1"), (3, "\nELSE", "ELSE")]
)
async def test_first_matching_group_wins_and_other_handles_are_skipped(
    n: int, answer_text: str, result: str
) -> None:
    outcome = await run_workflow(branches(GROUPS), query="q", variables={"n": n})
    assert outcome.answer_text == answer_text
    assert outcome.node_outputs["c"]["ifElseResult"] == result
    ran = {"IF": "if", "ELSE IF 1": "elif", "ELSE": "else"}[result]
    assert set(outcome.skipped_node_ids) == {"if", "elif", "else"} - {ran}


async def test_empty_and_group_is_true() -> None:
    outcome = await run_workflow(branches([group(), GROUPS[1]]), query="q")
    assert outcome.answer_text == "\nIF"
