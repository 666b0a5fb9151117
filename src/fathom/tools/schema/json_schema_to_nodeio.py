"""JSON Schema → NodeIO projection (spec §1.6): tool parameter schemas become node inputs / outputs / config
form fields, so HTTP, MCP and system tools can be configured like any workflow node.

Each input keeps a deep copy of its raw property in `customJsonSchema`, so nothing of the schema is lost
(`node_input_to_json_schema_property` returns it unchanged). Properties that no manual control can express
(mixed unions, tuples, unions with a `$ref` branch; spec §1.2.5) are locked to `agentGenerated`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from fathom.tools.schema.constants import (
    SCHEMA_TYPES,
    FlowNodeInputType,
    FlowNodeOutputType,
    InputConfigInputType,
    WorkflowIOValueType,
)
from fathom.tools.schema.nodeio_types import FlowNodeInputItem, FlowNodeOutputItem

__all__ = [
    "json_schema_to_node_inputs",
    "json_schema_to_node_outputs",
]

_ARRAY_ITEM_VALUE_TYPES = {
    "string": WorkflowIOValueType.arrayString,
    "number": WorkflowIOValueType.arrayNumber,
    "integer": WorkflowIOValueType.arrayNumber,
    "boolean": WorkflowIOValueType.arrayBoolean,
    "object": WorkflowIOValueType.arrayObject,
}
_SCALAR_VALUE_TYPES = {
    "string": WorkflowIOValueType.string,
    "number": WorkflowIOValueType.number,
    "integer": WorkflowIOValueType.number,
    "boolean": WorkflowIOValueType.boolean,
    "object": WorkflowIOValueType.object,
}


def _get_node_input_type_from_schema_input_type(schema_type: Any, array_items: Any = None) -> str:
    """`getNodeInputTypeFromSchemaInputType`: the NodeIO value type of a JSON-Schema `type` (spec §1.6.2)."""
    if not schema_type:
        return WorkflowIOValueType.any
    if not isinstance(schema_type, str):
        return WorkflowIOValueType.any
    if schema_type in _SCALAR_VALUE_TYPES:
        return _SCALAR_VALUE_TYPES[schema_type]
    if schema_type != "array":
        return WorkflowIOValueType.any
    if not array_items:
        return WorkflowIOValueType.arrayAny
    item_type = array_items.get("type") if isinstance(array_items, Mapping) else None
    return (
        _ARRAY_ITEM_VALUE_TYPES.get(item_type, WorkflowIOValueType.arrayAny)
        if isinstance(item_type, str)
        else WorkflowIOValueType.arrayAny
    )


def _properties(json_schema: Any) -> list[tuple[str, dict[str, Any]]]:
    if not isinstance(json_schema, Mapping):
        return []
    properties = json_schema.get("properties")
    if not isinstance(properties, Mapping):
        return []
    return [
        (str(key), dict(value) if isinstance(value, Mapping) else {}) for key, value in properties.items()
    ]


def _required(json_schema: Any) -> list[str]:
    required = json_schema.get("required") if isinstance(json_schema, Mapping) else None
    return [str(key) for key in required] if isinstance(required, list) else []


def _base_types(schema: Any) -> set[str] | None:
    """Non-null base types a schema admits, or None when they cannot be determined from the schema."""
    if not isinstance(schema, Mapping):
        return None
    if "$ref" in schema:
        return None
    declared = schema.get("type")
    if isinstance(declared, str):
        return {"number" if declared == "integer" else declared} - {"null"}
    if isinstance(declared, list):
        return {"number" if t == "integer" else str(t) for t in declared} - {"null"}
    for keyword in ("anyOf", "oneOf"):
        branches = schema.get(keyword)
        if isinstance(branches, list) and branches:
            found: set[str] = set()
            for branch in branches:
                types = _base_types(branch)
                if types is None:
                    return None
                found |= types
            return found
    return set()


def _is_agent_only_json_schema(schema: Any) -> bool:
    """Whether no manual control can express the property (mixed union, tuple, `$ref` in a union)."""
    if not isinstance(schema, Mapping):
        return False
    if isinstance(schema.get("items"), list) or "prefixItems" in schema:
        return True
    has_union = isinstance(schema.get("type"), list) or any(k in schema for k in ("anyOf", "oneOf"))
    if not has_union:
        return False
    types = _base_types(schema)
    return types is None or len(types) > 1


def _option(item: Any) -> dict[str, str]:
    value = _js_string(item)
    return {"label": value, "value": value}


def _js_string(item: Any) -> str:
    """`String(item)` as JavaScript prints scalars."""
    if item is True:
        return "true"
    if item is False:
        return "false"
    if item is None:
        return "null"
    if isinstance(item, float) and item.is_integer():
        return str(int(item))
    return str(item)


def _render(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Render-type fields of an input (spec §1.6.4)."""
    schema_type = schema.get("type")
    items = schema.get("items")
    item_enum = items.get("enum") if isinstance(items, Mapping) else None
    if schema_type == "array" and isinstance(item_enum, list) and item_enum:
        return {
            "value": [],
            "renderTypeList": [FlowNodeInputType.multipleSelect, FlowNodeInputType.reference],
            "list": [_option(item) for item in item_enum],
        }
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return {
            "value": _js_string(enum[0]),
            "renderTypeList": [FlowNodeInputType.select, FlowNodeInputType.reference],
            "list": [_option(item) for item in enum],
        }
    if schema_type == "string":
        return {"renderTypeList": [FlowNodeInputType.input, FlowNodeInputType.reference]}
    if schema_type in ("number", "integer"):
        render: dict[str, Any] = {
            "renderTypeList": [FlowNodeInputType.numberInput, FlowNodeInputType.reference]
        }
        for source, target in (("maximum", "max"), ("minimum", "min")):
            if isinstance(schema.get(source), (int, float)) and not isinstance(schema.get(source), bool):
                render[target] = schema[source]
        return render
    if schema_type == "boolean":
        return {"renderTypeList": [FlowNodeInputType.switch, FlowNodeInputType.reference]}
    return {"renderTypeList": [FlowNodeInputType.JSONEditor, FlowNodeInputType.reference]}


def _tool_description(schema: Mapping[str, Any], key: str, schema_type: str) -> Any:
    if schema_type == "http":
        return schema.get("x-tool-description")
    if schema_type == "systemTool":
        return schema.get("toolDescription") or schema.get("description")
    return schema.get("description") or key


def json_schema_to_node_inputs(json_schema: Any, schema_type: str) -> list[FlowNodeInputItem]:
    """`jsonSchema2NodeInput`: one node input per property of an object schema (spec §1.6.1–§1.6.4)."""
    if schema_type not in SCHEMA_TYPES:
        raise ValueError(f"schema_type must be one of {', '.join(SCHEMA_TYPES)}, got {schema_type!r}")
    required = _required(json_schema)
    inputs: list[FlowNodeInputItem] = []
    for key, schema in _properties(json_schema):
        data: dict[str, Any] = {
            "key": key,
            "label": schema.get("title") or key,
            "valueType": _get_node_input_type_from_schema_input_type(schema.get("type"), schema.get("items")),
        }
        for name in ("description", "isToolParam"):
            if schema.get(name) is not None:
                data[name] = schema[name]
        tool_description = _tool_description(schema, key, schema_type)
        if tool_description is not None:
            data["toolDescription"] = tool_description
        data["required"] = key in required
        if _is_agent_only_json_schema(schema):
            data["isToolParam"] = True
            data["renderTypeList"] = [FlowNodeInputType.agentGenerated]
            data["selectedType"] = FlowNodeInputType.agentGenerated
        else:
            data.update(_render(schema))
        data["customJsonSchema"] = copy.deepcopy(schema)
        inputs.append(FlowNodeInputItem.model_validate(data))
    return inputs


def json_schema_to_node_outputs(json_schema: Any) -> list[FlowNodeOutputItem]:
    """`jsonSchema2NodeOutput`: `{id, key, label, required, type: static, valueType, description}`."""
    required = _required(json_schema)
    outputs: list[FlowNodeOutputItem] = []
    for key, schema in _properties(json_schema):
        data: dict[str, Any] = {
            "id": key,
            "key": key,
            "label": schema.get("title") or key,
            "required": key in required,
            "type": FlowNodeOutputType.static,
            "valueType": _get_node_input_type_from_schema_input_type(schema.get("type"), schema.get("items")),
        }
        if schema.get("description") is not None:
            data["description"] = schema["description"]
        outputs.append(FlowNodeOutputItem.model_validate(data))
    return outputs


_SECRET_INPUT_TYPES = {
    WorkflowIOValueType.string: InputConfigInputType.input,
    WorkflowIOValueType.number: InputConfigInputType.numberInput,
    WorkflowIOValueType.boolean: InputConfigInputType.switch,
    WorkflowIOValueType.object: InputConfigInputType.input,
    WorkflowIOValueType.any: InputConfigInputType.input,
}
