"""Property tests of the validator: cached verdicts equal fresh ones and the plain `jsonschema` verdict,
key order never matters, and no schema or value makes validation raise."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator

from fathom.tools.schema import SchemaValidatorCache, ValidationResult, validate_tool_input_value

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-1000, 1000)
    | st.floats(allow_nan=False, width=32)
    | st.text(max_size=8)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
)
type_names = st.sampled_from(["string", "number", "integer", "boolean", "object", "array", "null"])


def _schemas() -> st.SearchStrategy[Any]:
    leaf = (
        st.fixed_dictionaries(
            {},
            optional={
                "type": type_names | st.lists(type_names, min_size=1, max_size=3, unique=True),
                "minimum": st.integers(-10, 10),
                "maxLength": st.integers(0, 5),
                "pattern": st.sampled_from(["^a", "b$", "[0-9]", "^[a-z]*$"]),
                "enum": st.lists(json_scalars, min_size=1, max_size=3),
                "const": json_scalars,
                "format": st.sampled_from(["email", "date-time", "uri"]),
            },
        )
        | st.booleans()
    )
    return st.recursive(
        leaf,
        lambda inner: st.fixed_dictionaries(
            {},
            optional={
                "properties": st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3),
                "required": st.lists(st.sampled_from(["a", "b", "c"]), unique=True, max_size=3),
                "items": inner,
                "additionalProperties": inner,
                "anyOf": st.lists(inner, min_size=1, max_size=3),
                "oneOf": st.lists(inner, min_size=1, max_size=3),
                "not": inner,
            },
        ),
        max_leaves=8,
    )


SHARED = SchemaValidatorCache()


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=_schemas(), value=json_values)
def test_cached_verdict_equals_fresh_and_plain_jsonschema_verdicts(schema: Any, value: Any) -> None:
    cached = validate_tool_input_value(schema, value, cache=SHARED)
    again = validate_tool_input_value(schema, value, cache=SHARED)
    fresh = validate_tool_input_value(schema, value, cache=SchemaValidatorCache())
    assert cached == again == fresh
    assert cached.success == Draft7Validator(schema).is_valid(value)
    assert cached.success == (cached.errors == [])


@settings(max_examples=100, deadline=None)
@given(schema=_schemas(), value=json_values)
def test_key_order_of_the_schema_never_changes_the_verdict(schema: Any, value: Any) -> None:
    def reverse(node: Any) -> Any:
        if isinstance(node, dict):
            return {key: reverse(node[key]) for key in reversed(list(node))}
        if isinstance(node, list):
            return [reverse(item) for item in node]
        return node

    cache = SchemaValidatorCache()
    first = validate_tool_input_value(schema, value, cache=cache)
    second = validate_tool_input_value(reverse(schema), value, cache=cache)
    assert first.success == second.success
    assert sorted(first.errors) == sorted(second.errors)


@settings(max_examples=200, deadline=None)
@given(schema=json_values, value=json_values)
def test_arbitrary_json_as_schema_and_value_never_raises(schema: Any, value: Any) -> None:
    result = validate_tool_input_value(schema, value, cache=SHARED)
    assert isinstance(result, ValidationResult)
    assert all(isinstance(error, str) and error for error in result.errors)
    assert result.success == (not result.errors)
