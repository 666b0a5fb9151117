"""The tool-input runtime compiler (spec §1.1–§1.4): vectors A and B, the merge vector, conflicts, the
deny list, secrets, annotation stripping, and `parameters` omitted when nothing is generated."""

from __future__ import annotations

from typing import Any

import pytest

from fathom.tools.schema import (
    AGENT_GENERATED_DENY_RENDER_TYPES,
    AgentToolInputMode,
    FlowNodeInputItem,
    ToolInputConflictError,
    can_input_be_agent_generated,
    compile_tool_runtime,
    get_selected_input_render_type,
    init_tool_input_type_by_default_mode,
    merge_tool_runtime_params,
)
from fathom.tools.schema.runtime import _create_tool_input_configurations, _create_tool_input_definitions

VECTOR_A_INPUTS: list[dict[str, Any]] = [
    {
        "key": "query",
        "label": "Query",
        "valueType": "string",
        "renderTypeList": ["agentGenerated", "input"],
        "selectedType": "agentGenerated",
        "required": True,
    },
    {
        "key": "limit",
        "label": "Limit",
        "valueType": "number",
        "renderTypeList": ["numberInput"],
        "selectedType": "numberInput",
        "defaultValue": 5,
        "required": True,
    },
    {
        "key": "dataset",
        "label": "Dataset",
        "valueType": "selectDataset",
        "renderTypeList": ["selectDataset"],
        "value": ["dataset-id"],
    },
]
VECTOR_A_SCHEMA = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 2},
        "limit": {"type": "number", "minimum": 1},
        "dataset": {"type": "string"},
    },
    "required": ["query", "limit"],
}


@pytest.mark.parametrize("as_models", [False, True])
def test_vector_a_separates_model_parameters_from_configured_values_and_defaults(as_models: bool) -> None:
    inputs: list[Any] = (
        [FlowNodeInputItem.model_validate(item) for item in VECTOR_A_INPUTS] if as_models else VECTOR_A_INPUTS
    )
    compiled = compile_tool_runtime(
        tool_id="search",
        name="Search",
        description="Search documents",
        inputs=inputs,
        json_schema=VECTOR_A_SCHEMA,
    )
    assert compiled.model_tool == {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Search: Search documents",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string", "minLength": 2}},
                "required": ["query"],
            },
        },
    }
    assert compiled.agent_generated_keys == ["query"]
    assert compiled.fixed_input_bindings == {"limit": 5, "dataset": ["dataset-id"]}
    assert compiled.to_wire()["agentGeneratedKeys"] == ["query"]


def test_vector_b_normalizes_persisted_modes_to_allowed_modes() -> None:
    compiled = compile_tool_runtime(
        tool_id="guarded-tool",
        name="Guarded tool",
        inputs=[
            {
                "key": "dataset",
                "valueType": "selectDataset",
                "renderTypeList": ["selectDataset"],
                "selectedType": "agentGenerated",
                "value": ["dataset-id"],
            },
            {
                "key": "mixedUnion",
                "valueType": "any",
                "renderTypeList": ["agentGenerated"],
                "selectedType": "input",
                "value": "persisted-manual-value",
            },
        ],
    )
    assert compiled.agent_generated_keys == ["mixedUnion"]
    assert compiled.fixed_input_bindings == {"dataset": ["dataset-id"]}
    assert compiled.model_tool["function"]["description"] == "Guarded tool"


def test_merge_vector_filters_unknown_model_fields_and_keeps_fixed_bindings_authoritative() -> None:
    merged = merge_tool_runtime_params(
        agent_generated_keys=["query"],
        fixed_input_bindings={"limit": 5},
        ai_params={"query": "fastgpt", "limit": 100, "unknown": True},
    )
    assert merged == {"limit": 5, "query": "fastgpt"}
    assert list(merged) == ["limit", "query"]
    assert merge_tool_runtime_params(["query"], {"limit": 5}) == {"limit": 5}


def test_merge_rejects_a_key_both_generated_and_fixed() -> None:
    with pytest.raises(ToolInputConflictError, match="^Tool input query cannot be both generated and fixed$"):
        merge_tool_runtime_params(["query"], {"query": "fixed"}, {"query": "generated"})


def test_compile_rejects_a_caller_binding_for_a_generated_key() -> None:
    with pytest.raises(ValueError, match="^Tool input query cannot be both generated and fixed$"):
        compile_tool_runtime(
            tool_id="search",
            name="Search",
            inputs=VECTOR_A_INPUTS,
            json_schema=VECTOR_A_SCHEMA,
            fixed_input_bindings={"query": "x"},
        )


def test_caller_bindings_are_overlaid_by_manual_configurations() -> None:
    compiled = compile_tool_runtime(
        tool_id="search",
        name="Search",
        inputs=VECTOR_A_INPUTS,
        json_schema=VECTOR_A_SCHEMA,
        fixed_input_bindings={"limit": 9, "extra": 1},
    )
    assert compiled.fixed_input_bindings == {"limit": 5, "extra": 1, "dataset": ["dataset-id"]}


def test_title_and_default_annotations_are_stripped_recursively_but_data_keywords_stay() -> None:
    compiled = compile_tool_runtime(
        tool_id="search",
        name="Search",
        inputs=[{"key": "filter", "valueType": "object", "renderTypeList": ["agentGenerated"]}],
        json_schema={
            "type": "object",
            "title": "Search parameters",
            "default": {"filter": {"query": "fastgpt"}},
            "properties": {
                "filter": {
                    "type": "object",
                    "title": "Filter",
                    "default": {"query": "fastgpt"},
                    "isToolParam": True,
                    "properties": {
                        "query": {
                            "type": "string",
                            "title": "Query",
                            "default": "fastgpt",
                            "examples": ["a"],
                        },
                        "title": {"const": "kept", "enum": ["kept"]},
                        "default": {"type": "string"},
                    },
                }
            },
        },
    )
    assert compiled.model_tool["function"]["parameters"] == {
        "type": "object",
        "properties": {
            "filter": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "examples": ["a"]},
                    "title": {"const": "kept", "enum": ["kept"]},
                    "default": {"type": "string"},
                },
            }
        },
    }


def test_nodeio_titles_and_defaults_are_removed_without_changing_manual_bindings() -> None:
    compiled = compile_tool_runtime(
        tool_id="search",
        name="Search",
        inputs=[
            {
                "key": "query",
                "label": "Query",
                "valueType": "string",
                "renderTypeList": ["agentGenerated"],
                "selectedType": "agentGenerated",
                "defaultValue": "fallback",
            },
            {
                "key": "limit",
                "valueType": "number",
                "renderTypeList": ["numberInput"],
                "selectedType": "numberInput",
                "defaultValue": 5,
            },
        ],
    )
    assert compiled.model_tool["function"]["parameters"] == {
        "type": "object",
        "properties": {"query": {"type": "string", "description": ""}},
    }
    assert compiled.fixed_input_bindings == {"limit": 5}


def test_parameters_are_omitted_when_nothing_is_agent_generated() -> None:
    compiled = compile_tool_runtime(
        tool_id="t",
        name="Tool",
        description="",
        inputs=[{"key": "limit", "renderTypeList": ["numberInput"], "value": 3}],
    )
    assert compiled.model_tool == {"type": "function", "function": {"name": "t", "description": "Tool"}}
    assert compiled.agent_generated_keys == []
    assert compiled.fixed_input_bindings == {"limit": 3}


@pytest.mark.parametrize("render_type", sorted(AGENT_GENERATED_DENY_RENDER_TYPES))
def test_denied_render_types_never_enter_the_model_schema_even_if_selected(render_type: str) -> None:
    item = {
        "key": "secret",
        "renderTypeList": ["agentGenerated", render_type],
        "selectedType": "agentGenerated",
        "value": "v",
    }
    compiled = compile_tool_runtime(tool_id="t", name="T", inputs=[item])
    assert compiled.agent_generated_keys == []
    assert compiled.fixed_input_bindings == {"secret": "v"}


@pytest.mark.parametrize(
    "item",
    [
        {"key": "system_input_config", "renderTypeList": ["agentGenerated"]},
        {"key": "system_forbid_stream", "renderTypeList": ["agentGenerated"]},
        {"key": "q", "renderTypeList": ["agentGenerated"], "canAgentGenerated": False},
        {"key": "q"},
    ],
)
def test_system_keys_missing_render_types_and_opt_outs_are_not_generatable(item: dict[str, Any]) -> None:
    assert not can_input_be_agent_generated(item)
    assert compile_tool_runtime(tool_id="t", name="T", inputs=[item]).agent_generated_keys == []


def test_secret_properties_and_nodeio_only_inputs_stay_out_of_the_model_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "apiKey": {"type": "string", "isSecret": True, "isToolParam": True},
            "q": {"type": "string"},
            "hint": {"type": "string", "isToolParam": True, "description": "extra"},
            "hiddenSecret": {"type": "string", "isSecret": True, "isToolParam": True},
        },
        "required": ["q", "hint", "apiKey"],
    }
    inputs = [
        {"key": "apiKey", "renderTypeList": ["agentGenerated"], "value": "sk"},
        {"key": "q", "renderTypeList": ["agentGenerated", "input"]},
        {"key": "files", "renderTypeList": ["fileSelect"], "value": ["f"]},
    ]
    compiled = compile_tool_runtime(tool_id="t", name="T", inputs=inputs, json_schema=schema)
    assert compiled.model_tool["function"]["parameters"] == {
        "type": "object",
        "properties": {"q": {"type": "string"}, "hint": {"type": "string", "description": "extra"}},
        "required": ["q", "hint"],
    }
    assert compiled.agent_generated_keys == ["q", "hint"]
    assert compiled.fixed_input_bindings == {"apiKey": "sk", "files": ["f"]}


def test_definitions_take_raw_property_then_custom_json_schema_and_allowed_modes() -> None:
    definitions = _create_tool_input_definitions(
        [
            {"key": "a", "renderTypeList": ["input", "reference"], "customJsonSchema": {"type": "integer"}},
            {"key": "b", "renderTypeList": ["reference"], "selectedType": "reference"},
            {"key": "c", "renderTypeList": ["agentGenerated"]},
            {"key": "d", "renderTypeList": ["selectLLMModel"]},
        ],
        {"properties": {"a": {"type": "string", "pattern": "x"}}},
    )
    assert [(d.key, d.json_schema, d.allowed_modes) for d in definitions] == [
        ("a", {"type": "string", "pattern": "x"}, ["agentGenerated", "manual"]),
        ("b", None, ["agentGenerated", "manual"]),
        ("c", None, ["agentGenerated"]),
        ("d", None, ["manual"]),
    ]
    configurations = _create_tool_input_configurations(definitions)
    assert [c.to_wire() for c in configurations] == [
        {"key": "a", "mode": "manual"},
        {"key": "b", "mode": "manual"},
        {"key": "c", "mode": "agentGenerated"},
        {"key": "d", "mode": "manual"},
    ]


def test_value_present_as_null_is_a_binding_and_wins_over_default() -> None:
    definitions = _create_tool_input_definitions(
        [
            {"key": "a", "renderTypeList": ["input"], "value": None, "defaultValue": 1},
            {"key": "b", "renderTypeList": ["input"], "defaultValue": 2},
        ]
    )
    wire = [c.to_wire() for c in _create_tool_input_configurations(definitions)]
    assert wire == [
        {"key": "a", "mode": "manual", "binding": None},
        {"key": "b", "mode": "manual", "binding": 2},
    ]


def test_selected_render_type_falls_back_to_selected_type_index() -> None:
    assert (
        get_selected_input_render_type({"key": "k", "renderTypeList": ["input", "agentGenerated"]}) == "input"
    )
    older = {"key": "k", "renderTypeList": ["input", "agentGenerated"], "selectedTypeIndex": 1}
    assert get_selected_input_render_type(older) == "agentGenerated"
    assert compile_tool_runtime(tool_id="t", name="T", inputs=[older]).agent_generated_keys == ["k"]


def test_is_tool_param_decides_only_the_first_default_mode() -> None:
    fresh = init_tool_input_type_by_default_mode(
        {"key": "q", "renderTypeList": ["input"], "isToolParam": True}
    )
    assert (fresh.selected_type, fresh.render_type_list, fresh.selected_type_index) == (
        "agentGenerated",
        ["agentGenerated", "input"],
        0,
    )
    chosen = init_tool_input_type_by_default_mode(
        {"key": "q", "renderTypeList": ["input"], "selectedType": "input", "isToolParam": True}
    )
    assert chosen.selected_type == "input"
    user_chat = init_tool_input_type_by_default_mode({"key": "userChatInput", "renderTypeList": ["input"]})
    assert user_chat.selected_type == AgentToolInputMode.agentGenerated
    opted_out = init_tool_input_type_by_default_mode(
        {"key": "userChatInput", "renderTypeList": ["input"], "isToolParam": False}
    )
    assert opted_out.selected_type is None
    denied = init_tool_input_type_by_default_mode(
        {"key": "p", "renderTypeList": ["password"], "isToolParam": True}
    )
    assert denied.selected_type is None


def test_root_definitions_stay_for_refs_but_root_combinators_stay_server_side() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"q": {"$ref": "#/$defs/query"}, "n": {"type": "integer"}},
        "$defs": {"query": {"type": "string", "title": "Query", "minLength": 1}},
        "additionalProperties": False,
        "oneOf": [{"required": ["q"]}, {"required": ["n"]}],
    }
    inputs = [
        {"key": "q", "renderTypeList": ["agentGenerated"]},
        {"key": "n", "renderTypeList": ["numberInput"]},
    ]
    parameters = compile_tool_runtime(tool_id="t", name="T", inputs=inputs, json_schema=schema).model_tool[
        "function"
    ]["parameters"]
    assert parameters == {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"q": {"$ref": "#/$defs/query"}},
        "$defs": {"query": {"type": "string", "minLength": 1}},
        "additionalProperties": False,
    }
