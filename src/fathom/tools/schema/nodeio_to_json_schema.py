"""NodeIO → JSON Schema (spec §1.7), and the model-visible tool schema built from it.

`node_input_to_json_schema_property` returns the raw `customJsonSchema` when an input carries one,
otherwise derives a property from the value type, enum candidates, label/description, default and
numeric bounds. `build_model_visible_tool_json_schema` keeps only agent-generated keys and strips the
display annotations (`title`, `default`, `isToolParam`) at every schema level, keeping `const`, `enum`
and `examples`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from fathom.tools.schema.constants import (
    TOOL_VALUE_TYPE_JSON_SCHEMAS,
    WorkflowIOValueType,
)
from fathom.tools.schema.nodeio_types import (
    NodeInputLike,
    to_node_input,
)

__all__ = [
    "MODEL_SCHEMA_STRIPPED_KEYWORDS",
    "node_input_to_json_schema_property",
    "strip_model_schema_annotations",
]

_FALLBACK = next(iter(TOOL_VALUE_TYPE_JSON_SCHEMAS.values()))
_EMPTY_VALUE_TYPES = {
    WorkflowIOValueType.any,
    WorkflowIOValueType.dynamic,
    WorkflowIOValueType.selectDataset,
    WorkflowIOValueType.selectApp,
}
_ARRAY_OF_OBJECTS = {
    WorkflowIOValueType.arrayObject,
    WorkflowIOValueType.chatHistory,
    WorkflowIOValueType.datasetQuote,
}


def _json_schema_property_from_value_type(value_type: str | None) -> dict[str, Any]:
    """The JSON-Schema property of a NodeIO value type (spec §1.7.2); unknown types fall back to string."""
    if value_type in _EMPTY_VALUE_TYPES:
        return {}
    if value_type == WorkflowIOValueType.arrayAny:
        return {"type": "array"}
    if value_type in _ARRAY_OF_OBJECTS:
        return {"type": "array", "items": {"type": "object"}}
    base = TOOL_VALUE_TYPE_JSON_SCHEMAS.get(value_type or "", _FALLBACK)
    return copy.deepcopy(base)


def _clone_property(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Shallow clone with `items` cloned too (spec §1.7.1)."""
    clone = dict(schema)
    if isinstance(clone.get("items"), Mapping):
        clone["items"] = dict(clone["items"])
    return clone


def _with_enum(schema: dict[str, Any], values: list[Any] | None) -> dict[str, Any]:
    if not values:
        return schema
    if schema.get("type") == "array":
        items = dict(schema["items"]) if isinstance(schema.get("items"), Mapping) else {}
        return {**schema, "items": {**items, "enum": values}}
    return {**schema, "enum": values}


def _enum_candidates(input_options: Any, enums: Any, enum_text: Any) -> list[Any] | None:
    """First non-empty of `list[].value`, `enums[].value`, `enum` split by newline (spec §1.7.3)."""
    candidates = [
        [option.value for option in input_options or () if option.value],
        [option.value for option in enums or () if option.value],
        [line for line in enum_text.split("\n") if line] if isinstance(enum_text, str) else [],
    ]
    return next((values for values in candidates if values), None)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def node_input_to_json_schema_property(item: NodeInputLike) -> dict[str, Any]:
    """`nodeInput2JsonSchemaProperty`: the JSON-Schema property of one node input."""
    node_input = to_node_input(item)
    if node_input.custom_json_schema is not None:
        return _clone_property(node_input.custom_json_schema)
    schema = _with_enum(
        _json_schema_property_from_value_type(node_input.value_type),
        _enum_candidates(node_input.options, node_input.enums, node_input.enum),
    )
    schema["title"] = node_input.label or node_input.key
    schema["description"] = node_input.tool_description or node_input.description or ""
    if node_input.has("default_value"):
        schema["default"] = node_input.default_value
    if _is_number(node_input.min):
        schema["minimum"] = node_input.min
    if _is_number(node_input.max):
        schema["maximum"] = node_input.max
    if node_input.tool_description:
        schema["toolDescription"] = node_input.tool_description
    if node_input.is_tool_param is not None:
        schema["isToolParam"] = node_input.is_tool_param
    return schema


MODEL_SCHEMA_STRIPPED_KEYWORDS = frozenset({"title", "default", "isToolParam"})
"""Display/default annotations removed from model-visible schemas at every level."""

_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SCHEMA_VALUES = (
    "items",
    "additionalItems",
    "additionalProperties",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
)


def strip_model_schema_annotations(schema: Any) -> Any:
    """A copy of `schema` without `title` / `default` / `isToolParam` in any subschema. Property *names*
    (keys of `properties`, `$defs`, ...) and data keywords (`const`, `enum`, `examples`) are untouched."""
    if not isinstance(schema, Mapping):
        return copy.deepcopy(schema)
    out: dict[str, Any] = {}
    for keyword, value in schema.items():
        if keyword in MODEL_SCHEMA_STRIPPED_KEYWORDS:
            continue
        if keyword in _SCHEMA_MAPS and isinstance(value, Mapping):
            out[keyword] = {name: strip_model_schema_annotations(sub) for name, sub in value.items()}
        elif keyword in _SCHEMA_LISTS and isinstance(value, list):
            out[keyword] = [strip_model_schema_annotations(sub) for sub in value]
        elif keyword in _SCHEMA_VALUES:
            if isinstance(value, list):
                out[keyword] = [strip_model_schema_annotations(sub) for sub in value]
            else:
                out[keyword] = strip_model_schema_annotations(value)
        else:
            out[keyword] = copy.deepcopy(value)
    return out
