"""The strict JSON Schema a developer writes for a manual tool parameter (spec §1.8,
`ToolParamJsonSchemaSchema` / `parseToolParamJsonSchema`).

Every level must declare one `type` of string/number/integer/boolean/object/array/null; `properties` and
`required` only on objects, `items` only (and always) on arrays, every `required` key defined in
`properties`. The parser also demands a non-blank `description` at the root.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fathom.tools.schema.json_schema_to_nodeio import get_node_input_type_from_schema_input_type

__all__ = [
    "TOOL_PARAM_SCHEMA_TYPES",
    "ParsedToolParamSchema",
    "ToolParamSchemaError",
    "ToolParamSchemaIssue",
    "check_tool_param_json_schema",
    "parse_tool_param_json_schema",
]

TOOL_PARAM_SCHEMA_TYPES = ("string", "number", "integer", "boolean", "object", "array", "null")


@dataclass(frozen=True, slots=True)
class ToolParamSchemaIssue:
    """One problem: where (`path`, keys from the root) and the exact message."""

    path: tuple[str | int, ...]
    message: str


class ToolParamSchemaError(ValueError):
    """A manual parameter schema that breaks the rules; `str()` joins the issue messages with `; `."""

    def __init__(self, issues: list[ToolParamSchemaIssue]) -> None:
        self.issues = list(issues)
        super().__init__("; ".join(issue.message for issue in self.issues))


@dataclass(frozen=True, slots=True)
class ParsedToolParamSchema:
    """Result of `parse_tool_param_json_schema`: trimmed description, the schema, its NodeIO value type."""

    description: str
    schema: dict[str, Any]
    value_type: str


def _check(schema: Any, path: tuple[str | int, ...], issues: list[ToolParamSchemaIssue]) -> None:
    if not isinstance(schema, Mapping):
        issues.append(ToolParamSchemaIssue(path, "schema must be an object"))
        return
    schema_type = schema.get("type")
    if schema_type not in TOOL_PARAM_SCHEMA_TYPES:
        allowed = ", ".join(TOOL_PARAM_SCHEMA_TYPES)
        issues.append(ToolParamSchemaIssue((*path, "type"), f"type must be one of {allowed}"))
    properties = schema.get("properties")
    if properties is not None and not isinstance(properties, Mapping):
        issues.append(ToolParamSchemaIssue((*path, "properties"), "properties must be an object"))
        properties = None
    required = schema.get("required")
    if required is not None and not (
        isinstance(required, list) and all(isinstance(k, str) for k in required)
    ):
        issues.append(ToolParamSchemaIssue((*path, "required"), "required must be an array of strings"))
        required = None
    for key, subschema in (properties or {}).items():
        _check(subschema, (*path, "properties", key), issues)
    items = schema.get("items")
    if items is not None:
        _check(items, (*path, "items"), issues)
    if properties is not None and schema_type != "object":
        issues.append(
            ToolParamSchemaIssue((*path, "properties"), "properties is only allowed when type is object")
        )
    if required is not None and schema_type != "object":
        issues.append(
            ToolParamSchemaIssue((*path, "required"), "required is only allowed when type is object")
        )
    if items is not None and schema_type != "array":
        issues.append(ToolParamSchemaIssue((*path, "items"), "items is only allowed when type is array"))
    if schema_type == "array" and not items:
        issues.append(ToolParamSchemaIssue((*path, "items"), "items is required when type is array"))
    defined = set(properties or {})
    for index, key in enumerate(required or []):
        if key not in defined:
            issues.append(
                ToolParamSchemaIssue(
                    (*path, "required", index), f"required field {key} is not defined in properties"
                )
            )


def check_tool_param_json_schema(schema: Any) -> list[ToolParamSchemaIssue]:
    """Every rule the schema breaks, at every level (empty when it is valid)."""
    issues: list[ToolParamSchemaIssue] = []
    _check(schema, (), issues)
    return issues


def parse_tool_param_json_schema(text: str) -> ParsedToolParamSchema:
    """Parse and strictly check a manual parameter schema; raise `ToolParamSchemaError` (a ValueError)
    on invalid JSON, any broken rule, or a blank description
    (`JSON Schema property description is required`)."""
    try:
        schema = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise ToolParamSchemaError([ToolParamSchemaIssue((), f"Invalid JSON: {exc}")]) from exc
    issues = check_tool_param_json_schema(schema)
    if issues:
        raise ToolParamSchemaError(issues)
    description = schema.get("description")
    description = description.strip() if isinstance(description, str) else ""
    if not description:
        raise ToolParamSchemaError(
            [ToolParamSchemaIssue(("description",), "JSON Schema property description is required")]
        )
    return ParsedToolParamSchema(
        description=description,
        schema=schema,
        value_type=get_node_input_type_from_schema_input_type(schema.get("type"), schema.get("items")),
    )
