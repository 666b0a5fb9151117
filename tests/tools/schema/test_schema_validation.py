"""Tool-input validation with FastGPT's AJV semantics (spec §1.5): vectors, error strings, dialects, bad
schemas, the validator cache."""

from __future__ import annotations

from typing import Any

import pytest

from fathom.tools.schema import (
    SchemaValidatorCache,
    ToolInputValidationError,
    ValidationResult,
    assert_tool_runtime_params,
    validate_tool_input_value,
)
from fathom.tools.schema.validation import _offline_registry, _validate_tool_runtime_params

PROPERTY = {"type": "string", "pattern": "^[a-z]+$", "minLength": 3}
ROOT_ONE_OF = {
    "oneOf": [
        {
            "type": "object",
            "properties": {"query": {"type": "string", "minLength": 3}},
            "required": ["query"],
            "additionalProperties": False,
        },
        {
            "type": "object",
            "properties": {"count": {"type": "number", "minimum": 1}},
            "required": ["count"],
            "additionalProperties": False,
        },
    ]
}


def test_property_vector_accepts_fastgpt_and_rejects_capital_a() -> None:
    assert validate_tool_input_value(PROPERTY, "fastgpt") == ValidationResult(True, [])
    assert validate_tool_input_value(PROPERTY, "A") == ValidationResult(
        False, ['/ must match pattern "^[a-z]+$"', "/ must NOT have fewer than 3 characters"]
    )


def test_no_schema_accepts_anything() -> None:
    assert validate_tool_input_value(None, object()) == ValidationResult(True, [])
    assert _validate_tool_runtime_params(None, {"x": 1}) == ValidationResult(True, [])


def test_additional_properties_false_rejects_unknown_key() -> None:
    schema = {"type": "object", "properties": {"query": PROPERTY}, "additionalProperties": False}
    assert _validate_tool_runtime_params({**schema, "required": ["query"]}, {"query": "fastgpt"}).success
    result = _validate_tool_runtime_params(schema, {"query": "fastgpt", "unknown": True})
    assert result.errors == ["/ must NOT have additional properties"]


def test_root_one_of_accepts_one_branch_and_reports_every_branch_error() -> None:
    assert _validate_tool_runtime_params(ROOT_ONE_OF, {"query": "fastgpt"}) == ValidationResult(True, [])
    result = _validate_tool_runtime_params(ROOT_ONE_OF, {"query": "x"})
    assert result.errors == [
        "/query must NOT have fewer than 3 characters",
        "/ must have required property 'count'",
        "/ must NOT have additional properties",
        "/ must match exactly one schema in oneOf",
    ]


def test_root_ref_to_defs_and_pattern_properties() -> None:
    referenced = {
        "$ref": "#/$defs/input",
        "$defs": {
            "input": {
                "type": "object",
                "properties": {"query": {"type": "string", "minLength": 3}},
                "required": ["query"],
                "additionalProperties": False,
            }
        },
    }
    assert _validate_tool_runtime_params(referenced, {"query": "fastgpt"}) == ValidationResult(True, [])
    assert _validate_tool_runtime_params(referenced, {}).errors == ["/ must have required property 'query'"]
    pattern = {
        "type": "object",
        "patternProperties": {"^value_": {"type": "number"}},
        "additionalProperties": False,
    }
    assert _validate_tool_runtime_params(pattern, {"value_count": "invalid"}).errors == [
        "/value_count must be number"
    ]


@pytest.mark.parametrize(
    ("schema", "value", "errors"),
    [
        ({"type": ["string", "null"]}, 3, ["/ must be string,null"]),
        ({"type": "integer", "maximum": 3.0}, 4, ["/ must be <= 3"]),
        ({"exclusiveMinimum": 0}, 0, ["/ must be > 0"]),
        ({"multipleOf": 2}, 3, ["/ must be multiple of 2"]),
        ({"enum": ["a", "b"]}, "c", ["/ must be equal to one of the allowed values"]),
        ({"const": 1}, 2, ["/ must be equal to constant"]),
        ({"maxItems": 1}, [1, 2], ["/ must NOT have more than 1 items"]),
        ({"uniqueItems": True}, [1, 1], ["/ must NOT have duplicate items"]),
        ({"not": {"type": "string"}}, "x", ["/ must NOT be valid"]),
        ({"anyOf": [{"type": "string"}]}, 1, ["/ must be string", "/ must match a schema in anyOf"]),
        (False, 1, ["/ boolean schema is false"]),
        (
            {"properties": {"a/b": {"properties": {"~": {"type": "string"}}}}},
            {"a/b": {"~": 1}},
            ["/a~1b/~0 must be string"],
        ),
        ({"items": {"type": "string"}}, ["ok", 2], ["/1 must be string"]),
    ],
)
def test_error_strings_use_instance_path_and_ajv_wording(schema: Any, value: Any, errors: list[str]) -> None:
    assert validate_tool_input_value(schema, value) == ValidationResult(False, errors)


def test_assert_raises_with_joined_errors() -> None:
    schema = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query", "n"]}
    with pytest.raises(ToolInputValidationError) as caught:
        assert_tool_runtime_params(schema, {"query": 1})
    assert str(caught.value) == (
        "Tool input validation failed: /query must be string; / must have required property 'n'"
    )
    assert caught.value.errors == ["/query must be string", "/ must have required property 'n'"]
    assert_tool_runtime_params(schema, {"query": "x", "n": 1})


def test_format_is_never_asserted_and_unknown_keywords_are_tolerated() -> None:
    assert validate_tool_input_value({"type": "string", "format": "email"}, "not an email").success
    assert validate_tool_input_value({"format": "made-up-format"}, "x").success
    assert validate_tool_input_value(
        {"type": "string", "x-tool-description": "d", "isToolParam": True}, "x"
    ).success


def test_draft07_is_the_default_dialect_not_2020_12() -> None:
    tuple_schema = {"items": [{"type": "string"}]}
    assert validate_tool_input_value(tuple_schema, [1]).errors == ["/0 must be string"]
    prefix = {"prefixItems": [{"type": "string"}]}
    assert validate_tool_input_value(prefix, [1]).success  # unknown keyword in draft-07
    assert not validate_tool_input_value(
        {"$schema": "https://json-schema.org/draft/2020-12/schema", **prefix}, [1]
    ).success
    dependent = {"dependentRequired": {"a": ["b"]}}
    assert validate_tool_input_value(dependent, {"a": 1}).success
    in_2019 = {"$schema": "https://json-schema.org/draft/2019-09/schema", **dependent}
    assert validate_tool_input_value(in_2019, {"a": 1}).errors == [
        "/ must have property b when property a is present"
    ]


def test_2020_12_rejects_array_items_as_a_malformed_schema() -> None:
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "items": [{"type": "string"}]}
    result = validate_tool_input_value(schema, ["x"])
    assert not result.success
    assert result.errors[0].startswith("schema is invalid: /items ")


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"type": "strin"}, "schema is invalid: /type 'strin' is not valid under any of the given schemas"),
        ({"pattern": "(["}, "schema is invalid: /pattern '([' is not a 'regex'"),
        ({"$ref": "#/definitions/missing"}, "can't resolve reference #/definitions/missing"),
        ({"properties": {"a": {"$ref": "#/$defs/nope"}}}, "can't resolve reference #/$defs/nope"),
        (
            {"$ref": "http://127.0.0.1:9/never-fetched.json"},
            "can't resolve reference http://127.0.0.1:9/never-fetched.json",
        ),
        (5, "schema must be object or boolean"),
        ({"enum": {1, 2}}, "schema is not JSON: Object of type set is not JSON serializable"),
    ],
)
def test_bad_schemas_give_a_clear_error_result_never_an_exception(schema: Any, message: str) -> None:
    assert _validate_tool_runtime_params(schema, {"a": 1}) == ValidationResult(False, [message])
    with pytest.raises(ToolInputValidationError, match="Tool input validation failed: "):
        assert_tool_runtime_params(schema, {"a": 1})


def test_missing_ref_fails_even_when_the_value_does_not_reach_it() -> None:
    schema = {"anyOf": [{"type": "string"}, {"$ref": "#/definitions/gone"}]}
    assert validate_tool_input_value(schema, "x").errors == ["can't resolve reference #/definitions/gone"]


def test_unicode_property_escapes_work_in_patterns() -> None:
    schema = {"type": "string", "pattern": "^\\p{Letter}+$"}
    assert validate_tool_input_value(schema, "π").success
    assert not validate_tool_input_value(schema, "123").success


def test_cache_keys_on_canonical_json_and_is_bounded() -> None:
    cache = SchemaValidatorCache(maxsize=2)
    first = cache.get({"type": "string", "minLength": 1})
    assert cache.get({"minLength": 1, "type": "string"}) is first
    assert len(cache) == 1
    cache.get({"type": "number"})
    cache.get({"type": "boolean"})
    assert len(cache) == 2
    assert cache.get({"type": "string", "minLength": 1}) is not first


def test_cached_validator_does_not_follow_later_mutation_of_the_callers_schema() -> None:
    cache = SchemaValidatorCache()
    schema: dict[str, Any] = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert not _validate_tool_runtime_params(schema, {"a": 1}, cache=cache).success
    schema["properties"]["a"]["type"] = "integer"
    assert _validate_tool_runtime_params(schema, {"a": 1}, cache=cache).success


def test_registry_resolves_known_remote_schemas_without_network() -> None:
    cache = SchemaValidatorCache(registry=_offline_registry({"urn:fathom:int": {"type": "integer"}}))
    schema = {"properties": {"n": {"$ref": "urn:fathom:int"}}}
    assert _validate_tool_runtime_params(schema, {"n": 1}, cache=cache).success
    assert _validate_tool_runtime_params(schema, {"n": "x"}, cache=cache).errors == ["/n must be integer"]
    assert not _validate_tool_runtime_params(schema, {"n": 1}).success  # default cache does not know it
