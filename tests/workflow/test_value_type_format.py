"""``valueTypeFormat`` for every value type (spec §4.5.3), with JavaScript conversion semantics."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fathom.workflow import value_type_format
from fathom.workflow.values import js_truthy

SECRET = {"secret": "v1:abc", "value": ""}

CASES: list[tuple[Any, str | None, Any]] = [
    # null / no type / any: unchanged
    (None, "string", None),
    ("x", None, "x"),
    ({"a": 1}, "any", {"a": 1}),
    # string
    ("hello", "string", "hello"),
    (12, "string", "12"),
    (1.5, "string", "1.5"),
    (2.0, "string", "2"),
    (True, "string", "true"),
    ({"a": [1, "é"]}, "string", '{"a":[1,"é"]}'),
    ([1, 2], "string", "[1,2]"),
    (SECRET, "string", SECRET),
    # number
    ("42", "number", 42),
    (" 3.5 ", "number", 3.5),
    ("", "number", None),
    (True, "number", 1),
    (7, "number", 7),
    # boolean
    ("TRUE", "boolean", True),
    ("false", "boolean", False),
    ("yes", "boolean", False),
    (1, "boolean", True),
    (0, "boolean", False),
    ([], "boolean", True),
    # object
    ('{"a": 1}', "object", {"a": 1}),
    ("{a: 1, b: 'x',}", "object", {"a": 1, "b": "x"}),
    ("[1,2]", "object", [1, 2]),
    ("not json", "object", {}),
    ("{broken", "object", {}),
    (5, "object", {}),
    ({"k": 1}, "object", {"k": 1}),
    # arrays
    ("[1, 2]", "arrayNumber", [1, 2]),
    ("['a', 'b']", "arrayString", ["a", "b"]),
    ("a", "arrayString", ["a"]),
    (3, "arrayNumber", [3]),
    (True, "arrayBoolean", [True]),
    ({"a": 1}, "arrayObject", [{"a": 1}]),
    ("[oops", "arrayAny", ["[oops"]),
    (["x"], "arrayAny", ["x"]),
    # chat history: list or number kept, JSON list parsed, else []
    (6, "chatHistory", 6),
    ([{"obj": "Human"}], "chatHistory", [{"obj": "Human"}]),
    ('[{"obj": "AI"}]', "chatHistory", [{"obj": "AI"}]),
    ("junk", "chatHistory", []),
    # dataset quote / select dataset / select app
    ('[{"id": "q1"}]', "datasetQuote", [{"id": "q1"}]),
    ("junk", "datasetQuote", []),
    ([{"datasetId": "d"}], "selectDataset", [{"datasetId": "d"}]),
    ("x", "selectDataset", []),
    ({"id": "app"}, "selectApp", {"id": "app"}),
    ("x", "selectApp", []),
    # dynamic and unknown types: unchanged
    ("x", "dynamic", "x"),
    (3, "somethingNew", 3),
]


@pytest.mark.parametrize(("value", "value_type", "expected"), CASES)
def test_value_type_format(value: Any, value_type: str | None, expected: Any) -> None:
    assert value_type_format(value, value_type) == expected


def test_non_numeric_string_becomes_nan() -> None:
    assert math.isnan(value_type_format("abc", "number"))


def test_javascript_truthiness() -> None:
    assert [js_truthy(v) for v in (None, False, 0, 0.0, "", math.nan)] == [False] * 6
    assert [js_truthy(v) for v in ([], {}, "0", "false", -1)] == [True] * 5


TYPES = ["string", "number", "boolean", "object", "arrayString", "arrayAny", "chatHistory", "datasetQuote"]
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)


@given(JSONISH, st.sampled_from(TYPES))
def test_formatting_is_idempotent(value: Any, value_type: str) -> None:
    once = value_type_format(value, value_type)
    assert value_type_format(once, value_type) == once or (isinstance(once, float) and math.isnan(once))
