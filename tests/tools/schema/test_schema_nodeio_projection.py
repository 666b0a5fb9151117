"""JSON Schema ⇄ NodeIO (spec §1.6–§1.8): value and render types per schema type, tool descriptions per
source, outputs, secret forms, the reverse projection, the strict manual schema, and wire round trips."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import strategies as st

from fathom.tools.schema import (
    FlowNodeInputItem,
    FlowNodeOutputItem,
    json_schema_to_node_inputs,
    json_schema_to_node_outputs,
    node_input_to_json_schema_property,
)

HTTP_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "select": {"type": "string", "enum": ["11", "22"]},
        "age": {"type": "number", "minimum": 0, "maximum": 100},
        "count": {"type": "integer", "x-tool-description": "how many"},
        "boolean": {"type": "boolean"},
        "object": {"type": "object"},
        "strArr": {"type": "array", "items": {"type": "string"}},
        "numArr": {"type": "array", "items": {"type": "integer"}},
        "boolArr": {"type": "array", "items": {"type": "boolean"}},
        "objArr": {"type": "array", "items": {"type": "object"}},
        "anyArr": {"type": "array", "items": {"type": "array"}},
        "bareArr": {"type": "array"},
        "nullable": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    },
    "required": ["name", "age"],
}


def _wire(items: list[Any]) -> list[dict[str, Any]]:
    return [
        {
            k: v
            for k, v in item.model_dump(by_alias=True, exclude_unset=True).items()
            if k != "customJsonSchema"
        }
        for item in items
    ]


def test_http_schema_projects_value_types_render_types_and_x_tool_description() -> None:
    inputs = json_schema_to_node_inputs(HTTP_SCHEMA, "http")
    assert _wire(inputs) == [
        {"key": "name", "label": "name", "valueType": "string", "required": True,
         "renderTypeList": ["input", "reference"]},
        {"key": "select", "label": "select", "valueType": "string", "required": False, "value": "11",
         "renderTypeList": ["select", "reference"],
         "list": [{"label": "11", "value": "11"}, {"label": "22", "value": "22"}]},
        {"key": "age", "label": "age", "valueType": "number", "required": True,
         "renderTypeList": ["numberInput", "reference"], "max": 100, "min": 0},
        {"key": "count", "label": "count", "valueType": "number", "toolDescription": "how many",
         "required": False, "renderTypeList": ["numberInput", "reference"]},
        {"key": "boolean", "label": "boolean", "valueType": "boolean", "required": False,
         "renderTypeList": ["switch", "reference"]},
        {"key": "object", "label": "object", "valueType": "object", "required": False,
         "renderTypeList": ["JSONEditor", "reference"]},
        {"key": "strArr", "label": "strArr", "valueType": "arrayString", "required": False,
         "renderTypeList": ["JSONEditor", "reference"]},
        {"key": "numArr", "label": "numArr", "valueType": "arrayNumber", "required": False,
         "renderTypeList": ["JSONEditor", "reference"]},
        {"key": "boolArr", "label": "boolArr", "valueType": "arrayBoolean", "required": False,
         "renderTypeList": ["JSONEditor", "reference"]},
        {"key": "objArr", "label": "objArr", "valueType": "arrayObject", "required": False,
         "renderTypeList": ["JSONEditor", "reference"]},
        {"key": "anyArr", "label": "anyArr", "valueType": "arrayAny", "required": False,
         "renderTypeList": ["JSONEditor", "reference"]},
        {"key": "bareArr", "label": "bareArr", "valueType": "arrayAny", "required": False,
         "renderTypeList": ["JSONEditor", "reference"]},
        {"key": "nullable", "label": "nullable", "valueType": "any", "required": False,
         "renderTypeList": ["JSONEditor", "reference"]},
    ]  # fmt: skip


def test_every_input_keeps_a_deep_copy_of_its_raw_property() -> None:
    schema = {"properties": {"q": {"type": "string", "pattern": "^[a-z]+$", "format": "hostname"}}}
    [node_input] = json_schema_to_node_inputs(schema, "mcp")
    assert node_input.custom_json_schema == schema["properties"]["q"]
    node_input.custom_json_schema["pattern"] = "changed"  # type: ignore[index]
    assert schema["properties"]["q"]["pattern"] == "^[a-z]+$"


@pytest.mark.parametrize(
    ("schema_type", "expected"),
    [
        ("mcp", ["User name", "age"]),
        ("http", [None, None]),
        ("systemTool", ["Agent query", None]),
    ],
)
def test_tool_description_depends_on_the_source(schema_type: str, expected: list[str | None]) -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "toolDescription": "Agent query"},
            "age": {"type": "number"},
        },
    }
    inputs = json_schema_to_node_inputs(schema, schema_type)
    assert [item.tool_description for item in inputs] == expected
    if schema_type == "mcp":
        assert inputs[0].description == "User name"


def test_system_tool_description_falls_back_to_description_and_keeps_is_tool_param() -> None:
    schema = {
        "properties": {
            "q": {"type": "string", "description": "Search query", "isToolParam": True, "title": "Q"}
        },
        "required": ["q"],
    }
    [item] = json_schema_to_node_inputs(schema, "systemTool")
    assert (item.label, item.tool_description, item.is_tool_param, item.required) == (
        "Q",
        "Search query",
        True,
        True,
    )


def test_array_enum_becomes_multiple_select_with_string_options() -> None:
    schema = {
        "properties": {
            "sources": {
                "type": "array",
                "items": {"type": "string", "enum": ["36kr", "zhihu"]},
                "title": "热榜来源",
            },
            "level": {"type": "integer", "enum": [1, 2.0, True]},
        }
    }
    sources, level = json_schema_to_node_inputs(schema, "mcp")
    assert (sources.label, sources.value, sources.render_type_list) == (
        "热榜来源",
        [],
        ["multipleSelect", "reference"],
    )
    assert [o.model_dump() for o in sources.options or []] == [
        {"label": "36kr", "value": "36kr", "description": None},
        {"label": "zhihu", "value": "zhihu", "description": None},
    ]
    assert level.value == "1"
    assert [o.value for o in level.options or []] == ["1", "2", "true"]


@pytest.mark.parametrize(
    "schema",
    [
        {"oneOf": [{"type": "string"}, {"type": "number"}]},
        {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/x"}], "$defs": {"x": {"type": "string"}}},
        {"type": "array", "items": [{"type": "string"}, {"type": "number"}]},
        {"type": ["string", "number"]},
    ],
)
def test_mixed_unions_and_tuples_are_locked_to_agent_generated(schema: dict[str, Any]) -> None:
    [item] = json_schema_to_node_inputs({"properties": {"value": schema}}, "mcp")
    assert item.render_type_list == ["agentGenerated"]
    assert item.selected_type == "agentGenerated"
    assert item.is_tool_param is True
    assert item.custom_json_schema == schema


def test_unknown_schema_type_is_rejected_and_missing_schema_gives_nothing() -> None:
    with pytest.raises(ValueError, match="schema_type must be one of mcp, http, systemTool"):
        json_schema_to_node_inputs({}, "openapi")
    assert json_schema_to_node_inputs(None, "mcp") == []
    assert json_schema_to_node_outputs(None) == []


def test_outputs_are_static_with_value_types() -> None:
    schema = {
        "properties": {
            "text": {"type": "string", "description": "d", "title": "Text"},
            "n": {"type": "integer"},
        },
        "required": ["text"],
    }
    assert [o.model_dump(by_alias=True, exclude_unset=True) for o in json_schema_to_node_outputs(schema)] == [
        {"id": "text", "key": "text", "label": "Text", "required": True, "type": "static",
         "valueType": "string", "description": "d"},
        {"id": "n", "key": "n", "label": "n", "required": False, "type": "static", "valueType": "number"},
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("value_type", "schema"),
    [
        ("any", {}),
        ("arrayAny", {"type": "array"}),
        ("arrayObject", {"type": "array", "items": {"type": "object"}}),
        ("chatHistory", {"type": "array", "items": {"type": "object"}}),
        ("datasetQuote", {"type": "array", "items": {"type": "object"}}),
        ("dynamic", {}),
        ("selectDataset", {}),
        ("selectApp", {}),
        ("arrayNumber", {"type": "array", "items": {"type": "number"}}),
        ("object", {"type": "object"}),
        ("somethingNew", {"type": "string"}),
        (None, {"type": "string"}),
    ],
)
def test_node_input_value_types_map_to_json_schema(value_type: str | None, schema: dict[str, Any]) -> None:
    item: dict[str, Any] = {"key": "k", "renderTypeList": ["input"]}
    if value_type is not None:
        item["valueType"] = value_type
    assert node_input_to_json_schema_property(item) == {**schema, "title": "k", "description": ""}


def test_node_input_projection_adds_enum_bounds_default_and_descriptions() -> None:
    item = {
        "key": "level",
        "label": "Level",
        "valueType": "number",
        "renderTypeList": ["select"],
        "list": [{"label": "One", "value": "1"}, {"label": "Empty", "value": ""}],
        "enums": [{"value": "9"}],
        "min": 1,
        "max": 3,
        "defaultValue": "1",
        "toolDescription": "pick a level",
        "description": "ignored when toolDescription is set",
        "isToolParam": False,
    }
    assert node_input_to_json_schema_property(item) == {
        "type": "number",
        "enum": ["1"],
        "title": "Level",
        "description": "pick a level",
        "default": "1",
        "minimum": 1,
        "maximum": 3,
        "toolDescription": "pick a level",
        "isToolParam": False,
    }
    array_enum = {"key": "tags", "valueType": "arrayString", "enum": "a\n\nb"}
    assert node_input_to_json_schema_property(array_enum)["items"] == {"type": "string", "enum": ["a", "b"]}


def test_custom_json_schema_is_returned_as_a_clone() -> None:
    raw = {"type": "array", "items": {"type": "string", "minLength": 2}, "title": "Raw"}
    item = FlowNodeInputItem.model_validate({"key": "k", "customJsonSchema": raw, "label": "ignored"})
    projected = node_input_to_json_schema_property(item)
    assert projected == raw
    projected["items"]["minLength"] = 5
    assert raw["items"]["minLength"] == 2


def test_fastgpt_node_input_json_round_trips_unchanged() -> None:
    wire = {
        "key": "userChatInput",
        "renderTypeList": ["reference", "textarea"],
        "selectedTypeIndex": 0,
        "valueType": "string",
        "label": "用户问题",
        "required": True,
        "toolDescription": "用户问题",
        "value": ["448745", "userChatInput"],
        "list": [{"label": "a", "value": 1, "icon": "x"}],
        "max": 10,
        "step": 0.5,
        "debugLabel": "",
        "customInputConfig": {"selectValueTypeList": ["string"], "showDescription": False},
        "someFutureField": {"nested": [1, None]},
        "description": None,
    }
    item = FlowNodeInputItem.model_validate(wire)
    assert item.model_dump(by_alias=True, exclude_unset=True) == wire
    assert item.to_wire() == wire
    output = {
        "id": "answerText",
        "key": "answerText",
        "type": "static",
        "valueType": "string",
        "future": True,
    }
    assert FlowNodeOutputItem.model_validate(output).model_dump(by_alias=True, exclude_unset=True) == output


_property_types = st.sampled_from(["string", "number", "integer", "boolean", "object"])
_properties = st.one_of(
    _property_types.map(lambda t: {"type": t}),
    _property_types.map(lambda t: {"type": "array", "items": {"type": t}}),
    st.lists(st.text(min_size=1, max_size=4), min_size=1, max_size=3, unique=True).map(
        lambda values: {"type": "string", "enum": values}
    ),
)
