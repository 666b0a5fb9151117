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
    assert cached == again
    # the shared cache keys schemas by canonical JSON, so its errors follow the key order of the first
    # schema compiled with those keys: the same errors, possibly in another order than a fresh cache's
    assert cached.success == fresh.success and sorted(cached.errors) == sorted(fresh.errors)
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


def _fast_path_schemas() -> st.SearchStrategy[Any]:
    leaf = (
        st.fixed_dictionaries(
            {},
            optional={
                "type": type_names | st.lists(type_names, min_size=1, max_size=3, unique=True),
                "minLength": st.integers(0, 3),
                "maximum": st.integers(-10, 10) | st.floats(-10, 10, allow_nan=False),
                "exclusiveMinimum": st.integers(-10, 10),
                "multipleOf": st.sampled_from([2, 0.5, 0.1, 3]),
                "enum": st.lists(json_scalars, min_size=1, max_size=3),
                "uniqueItems": st.booleans(),
                "minItems": st.integers(0, 2),
                "maxProperties": st.integers(0, 3),
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
                "additionalProperties": inner,
                "items": inner,
                "allOf": st.lists(inner, min_size=1, max_size=2),
                "if": inner,
                "then": inner,
                "else": inner,
                "propertyNames": inner,
            },
        ),
        max_leaves=8,
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    schema=_fast_path_schemas(),
    value=json_values,
    dialect=st.sampled_from(
        [
            "http://json-schema.org/draft-07/schema#",
            "https://json-schema.org/draft/2019-09/schema",
            "https://json-schema.org/draft/2020-12/schema",
        ]
    ),
)
def test_the_fast_path_gives_the_full_validators_verdict(schema: Any, value: Any, dialect: str) -> None:
    if isinstance(schema, dict):
        schema = {"$schema": dialect, **schema}
    compiled = SHARED.compile(schema)
    assert compiled.validator is not None and compiled.fast is not None
    assert compiled.fast(value) == compiled.validator.is_valid(value)
