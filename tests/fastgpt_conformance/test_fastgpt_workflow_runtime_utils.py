"""FastGPT's workflow runtime helper cases, restated as data and run against Fathom's functions.

Source: labring/FastGPT ``test/cases/global/core/workflow/runtime/utils.test.ts`` at commit
03dd9c00a83ee6557524f160462abcffceab1d71 (``describe`` > ``it`` names below). JavaScript's ``undefined``
and ``null`` are both Python's ``None``; ``NAN`` stands for JavaScript's ``NaN``.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from fathom.workflow.constants import VARIABLE_NODE_ID
from fathom.workflow.events import text_adapt_gpt_response
from fathom.workflow.graph import load_workflow
from fathom.workflow.interactive import get_last_interactive_value
from fathom.workflow.runtime import (
    RuntimeEdge,
    build_runtime_nodes,
    get_workflow_entry_node_ids,
    is_control_edge,
    rewrite_node_output_by_histories,
    store_edges_to_runtime_edges,
)
from fathom.workflow.values import format_variable_val_by_type, value_type_format
from fathom.workflow.variables import get_reference_variable_value, replace_editor_variable

SOURCE = "test/cases/global/core/workflow/runtime/utils.test.ts@03dd9c00a83ee6557524f160462abcffceab1d71"
NAN = float("nan")

# ---------------------------------------------------------------- valueTypeFormat
VT = "valueTypeFormat > "
VALUE_TYPE_FORMAT: list[tuple[str, Any, str | None, Any]] = [
    (VT + "should return undefined/null as is", None, "string", None),
    (VT + "should return value as is when no valueType or any type", "test", None, "test"),
    (VT + "should return value as is when no valueType or any type", "test", "any", "test"),
    (
        VT + "should return secret value as is for string type",
        {"secret": True, "value": "password"},
        "string",
        {"secret": True, "value": "password"},
    ),
    (VT + "should return value when already matches target type", "hello", "string", "hello"),
    (VT + "should return value when already matches target type", 123, "number", 123),
    (VT + "should return value when already matches target type", True, "boolean", True),
    (VT + "should return value when already matches target type", [1, 2], "arrayNumber", [1, 2]),
    (VT + "should return value when already matches target type", {"a": 1}, "object", {"a": 1}),
    (
        VT + "should handle chatHistory type",
        [{"obj": "Human", "value": "hi"}],
        "chatHistory",
        [{"obj": "Human", "value": "hi"}],
    ),
    (VT + "should handle chatHistory type", 5, "chatHistory", 5),
    (VT + "should convert to string type", 123, "string", "123"),
    (VT + "should convert to string type", {"a": 1}, "string", '{"a":1}'),
    (VT + "should convert to string type", True, "string", "true"),
    (VT + "should convert to number type", "123", "number", 123),
    (VT + "should convert to number type", "", "number", None),
    (VT + "should convert to number type", "3.14", "number", 3.14),
    (VT + "should convert to boolean type", "true", "boolean", True),
    (VT + "should convert to boolean type", "TRUE", "boolean", True),
    (VT + "should convert to boolean type", "false", "boolean", False),
    (VT + "should convert to boolean type", 1, "boolean", True),
    (VT + "should convert to boolean type", 0, "boolean", False),
    (VT + "should convert string to object type", '{"a":1}', "object", {"a": 1}),
    (VT + "should convert string to object type", '  {"b":2}  ', "object", {"b": 2}),
    (VT + "should convert string to object type", "invalid", "object", {}),
    (VT + "should convert string to object type", "true", "object", {}),
    (VT + "should convert string to object type", "false", "object", {}),
    (VT + "should convert to array type", "[1,2,3]", "arrayNumber", [1, 2, 3]),
    (VT + "should convert to array type", '["a","b"]', "arrayString", ["a", "b"]),
    (VT + "should convert to array type", "single", "arrayString", ["single"]),
    (VT + "should convert to array type", "invalid{", "arrayString", ["invalid{"]),
    (VT + "should handle special types", '[{"id":"1"}]', "datasetQuote", [{"id": "1"}]),
    (VT + "should handle special types", "invalid", "datasetQuote", []),
    (VT + "should handle special types", '[{"datasetId":"1"}]', "selectDataset", [{"datasetId": "1"}]),
    (VT + "should handle special types", "invalid", "selectDataset", []),
    (VT + "should handle special types", '{"appId":"1"}', "selectApp", {"appId": "1"}),
    (VT + "should handle special types", "invalid", "selectApp", []),
    (
        VT + "should handle chatHistory conversion from string",
        '[{"obj":"Human","value":"hi"}]',
        "chatHistory",
        [{"obj": "Human", "value": "hi"}],
    ),
    (VT + "should handle chatHistory conversion from string", "invalid", "chatHistory", []),
    (VT + "String test 0", "a", "string", "a"),
    (VT + "String test 1", "a", "number", NAN),
    (VT + "String test 2", "a", "boolean", False),
    (VT + "String test 3", "true", "boolean", True),
    (VT + "String test 4", "false", "boolean", False),
    (VT + "String test 5", "false", "arrayNumber", ["false"]),
    (VT + "String test 6", "false", "arrayString", ["false"]),
    (VT + "String test 7", "false", "object", {}),
    (VT + "String test 8", "false", "selectApp", []),
    (VT + "String test 9", "false", "selectDataset", []),
    (VT + "String test 10", "saf", "selectDataset", []),
    (VT + "String test 11", "[]", "selectDataset", []),
    (VT + "String test 12", '{"a":1}', "object", {"a": 1}),
    (VT + "String test 13", '[{"a":1}]', "arrayAny", [{"a": 1}]),
    (VT + "String test 14", '["111"]', "arrayString", ["111"]),
    (VT + "Number test 0", 1, "string", "1"),
    (VT + "Number test 1", 1, "number", 1),
    (VT + "Number test 2", 1, "boolean", True),
    (VT + "Number test 3", 0, "boolean", False),
    (VT + "Number test 4", 0, "any", 0),
    (VT + "Number test 5", 0, "arrayAny", [0]),
    (VT + "Number test 6", 0, "arrayNumber", [0]),
    (VT + "Number test 7", 0, "arrayString", [0]),
    (VT + "Boolean test 0", True, "string", "true"),
    (VT + "Boolean test 1", True, "number", 1),
    (VT + "Boolean test 2", False, "number", 0),
    (VT + "Boolean test 3", True, "boolean", True),
    (VT + "Boolean test 4", True, "any", True),
    (VT + "Boolean test 5", True, "arrayBoolean", [True]),
    (VT + "Boolean test 6", True, "object", {}),
    (VT + "Object test 0", {"a": 1}, "string", '{"a":1}'),
    (VT + "Object test 1", {"a": 1}, "number", NAN),
    (VT + "Object test 2", {"a": 1}, "boolean", True),
    (VT + "Object test 3", {"a": 1}, "object", {"a": 1}),
    (VT + "Object test 4", {"a": 1}, "arrayAny", [{"a": 1}]),
    (VT + "Array test 0", [1, 2, 3], "string", "[1,2,3]"),
    (VT + "Array test 1", [1, 2, 3], "number", NAN),
    (VT + "Array test 2", [1, 2, 3], "boolean", True),
    (VT + "Array test 3", [1, 2, 3], "arrayNumber", [1, 2, 3]),
    (VT + "Array test 4", [1, 2, 3], "arrayAny", [1, 2, 3]),
    (VT + "ChatHistory test 0", [1, 2, 3], "chatHistory", [1, 2, 3]),
    (VT + "ChatHistory test 1", 1, "chatHistory", 1),
    (VT + "ChatHistory test 2", "1", "chatHistory", []),
    *[
        (VT + f"Null test {i}", None, t, None)
        for i, t in enumerate(["string", "number", "boolean", "arrayAny", "object", "chatHistory"])
    ],
    (VT + "should return default value when json5.parse throws for object type", "{a: }", "object", {}),
    (VT + "should return [value] when json5.parse throws for array type", "[a]", "arrayString", ["[a]"]),
    (VT + "should return [] when json5.parse throws for special types", "[a]", "datasetQuote", []),
    (VT + "should return [] when json5.parse throws for special types", "[a]", "selectDataset", []),
    (VT + "should return [] when json5.parse throws for special types", "[a]", "selectApp", []),
    (VT + "should return [] when json5.parse throws for chatHistory type", "[a]", "chatHistory", []),
    (VT + "should return value as-is for unhandled valueType (dynamic)", "hello", "dynamic", "hello"),
    (VT + "should return value as-is for unhandled valueType (dynamic)", 42, "dynamic", 42),
]


def same(found: Any, expected: Any) -> bool:
    if isinstance(expected, float) and math.isnan(expected):
        return isinstance(found, float) and math.isnan(found)
    return bool(found == expected and type(found) is type(expected))


@pytest.mark.parametrize(
    ("name", "value", "value_type", "expected"),
    VALUE_TYPE_FORMAT,
    ids=[f"{c[0]} [{i}]" for i, c in enumerate(VALUE_TYPE_FORMAT)],
)
def test_value_type_format_matches_fastgpt(
    name: str, value: Any, value_type: str | None, expected: Any
) -> None:
    assert same(value_type_format(value, value_type), expected)


# ---------------------------------------------------------------- getLastInteractiveValue
LI = "getLastInteractiveValue > "


def record(kind: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"type": kind, "entryNodeIds": ["node1"], "memoryEdges": [], "nodeOutputs": [], "params": params}


# Fathom's stored chat values carry ``type: "interactive"`` (FastGPT's typed value layout, which Fathom
# keeps on the wire); FastGPT's newer test omits the type, so the value is restated in Fathom's form.
LAST_INTERACTIVE: list[tuple[str, list[dict[str, Any]], dict[str, Any] | None, bool]] = [
    (
        LI + "should return undefined when no AI message",
        [{"obj": "Human", "value": [{"type": "text", "text": {"content": "hello"}}]}],
        None,
        False,
    ),
    (
        LI + "should return undefined when AI message has no interactive",
        [{"obj": "AI", "value": [{"type": "text", "text": {"content": "response"}}]}],
        None,
        False,
    ),
    (
        LI + "should return interactive for childrenInteractive type",
        [],
        record("childrenInteractive", {"childrenResponse": {}}),
        True,
    ),
    (
        LI + "should return interactive for userSelect without selection",
        [],
        record(
            "userSelect", {"description": "Choose one", "userSelectOptions": [{"key": "a", "value": "A"}]}
        ),
        True,
    ),
    (
        LI + "should return undefined for userSelect with selection",
        [],
        record(
            "userSelect",
            {
                "description": "Choose one",
                "userSelectOptions": [{"key": "a", "value": "A"}],
                "userSelectedVal": "A",
            },
        ),
        False,
    ),
    (
        LI + "should return interactive for userInput without submission",
        [],
        record("userInput", {"description": "Enter info", "inputForm": []}),
        True,
    ),
    (
        LI + "should return undefined for userInput with submission",
        [],
        record("userInput", {"description": "Enter info", "inputForm": [], "submitted": True}),
        False,
    ),
    (
        LI + "should return interactive for paymentPause without continue",
        [],
        record("paymentPause", {"description": "Payment required"}),
        True,
    ),
    (
        LI + "should return undefined for paymentPause with continue",
        [],
        record("paymentPause", {"description": "Payment required", "continue": True}),
        False,
    ),
    (
        LI + "should return undefined for agentPlanCheck with confirmation",
        [],
        record("agentPlanCheck", {"confirmed": True}),
        False,
    ),
]

# Asserted differences: FastGPT's older plan-agent pauses (agentPlan*) resume in FastGPT; Fathom's agent
# pauses with the newest FastGPT's ``agentAsk`` record and never writes agentPlan* records, so a stored
# one is not treated as pending (the next message starts a fresh run instead of resuming a plan step).
LAST_INTERACTIVE_DIFFERENCES = [
    (LI + "should return interactive for agentPlanCheck without confirmation", record("agentPlanCheck", {})),
    (
        LI + "should return interactive for agentPlanAskQuery",
        record("agentPlanAskQuery", {"content": "What do you want?"}),
    ),
    (
        LI + "should return interactive for agentPlanAskUserSelect without selection",
        record("agentPlanAskUserSelect", {"description": "Choose", "userSelectOptions": []}),
    ),
    (
        LI + "should return interactive for agentPlanAskUserForm without submission",
        record("agentPlanAskUserForm", {"description": "Fill form", "inputForm": []}),
    ),
]


def ai_with(interactive: dict[str, Any]) -> list[dict[str, Any]]:
    value = [
        {"type": "text", "text": {"content": "response"}},
        {"type": "interactive", "interactive": interactive},
    ]
    return [{"obj": "AI", "value": value}]


@pytest.mark.parametrize(
    ("name", "histories", "interactive", "pending"), LAST_INTERACTIVE, ids=[c[0] for c in LAST_INTERACTIVE]
)
def test_get_last_interactive_value_matches_fastgpt(
    name: str, histories: list[dict[str, Any]], interactive: dict[str, Any] | None, pending: bool
) -> None:
    found = get_last_interactive_value(histories or ai_with(interactive or {}))
    assert found == (interactive if pending else None)


@pytest.mark.parametrize(
    ("name", "interactive"), LAST_INTERACTIVE_DIFFERENCES, ids=[c[0] for c in LAST_INTERACTIVE_DIFFERENCES]
)
def test_get_last_interactive_value_differs_for_plan_agent_records(
    name: str, interactive: dict[str, Any]
) -> None:
    assert get_last_interactive_value(ai_with(interactive)) is None  # FastGPT: the record itself


# ---------------------------------------------------------------- storeEdges2RuntimeEdges
SE = "storeEdges2RuntimeEdges > "
STORE_EDGE = {"source": "node1", "sourceHandle": "out1", "target": "node2", "targetHandle": "in1"}
MEMORY_EDGE = {
    "source": "node3",
    "sourceHandle": "out3",
    "target": "node4",
    "targetHandle": "in4",
    "status": "active",
}
SELECT_PARAMS = {"description": "", "userSelectOptions": []}
STORE_EDGES: list[tuple[str, list[dict[str, Any]] | None, dict[str, Any] | None, list[dict[str, Any]]]] = [
    (
        SE + "should convert store edges to runtime edges with waiting status",
        [STORE_EDGE],
        None,
        [STORE_EDGE | {"status": "waiting"}],
    ),
    (
        SE + "should return memory edges from lastInteractive if available",
        [STORE_EDGE],
        {
            "type": "userSelect",
            "entryNodeIds": ["node3"],
            "memoryEdges": [MEMORY_EDGE],
            "params": SELECT_PARAMS,
        },
        [MEMORY_EDGE],
    ),
    (
        SE + "should return converted edges when lastInteractive has empty memoryEdges",
        [STORE_EDGE],
        {"type": "userSelect", "entryNodeIds": ["node1"], "memoryEdges": [], "params": SELECT_PARAMS},
        [STORE_EDGE | {"status": "waiting"}],
    ),
    (SE + "should handle undefined edges", None, None, []),
    (
        SE + "should use fallback [] when lastInteractive.memoryEdges is undefined",
        [{"source": "n1", "sourceHandle": "out1", "target": "n2", "targetHandle": "in1"}],
        {"type": "userSelect", "entryNodeIds": [], "memoryEdges": None, "params": SELECT_PARAMS},
        [
            {
                "source": "n1",
                "sourceHandle": "out1",
                "target": "n2",
                "targetHandle": "in1",
                "status": "waiting",
            }
        ],
    ),
]


@pytest.mark.parametrize(
    ("name", "edges", "interactive", "expected"), STORE_EDGES, ids=[c[0] for c in STORE_EDGES]
)
def test_store_edges_to_runtime_edges_matches_fastgpt(
    name: str,
    edges: list[dict[str, Any]] | None,
    interactive: dict[str, Any] | None,
    expected: list[dict[str, Any]],
) -> None:
    assert [edge.to_dict() for edge in store_edges_to_runtime_edges(edges, interactive)] == expected


# ---------------------------------------------------------------- getWorkflowEntryNodeIds
WE = "getWorkflowEntryNodeIds > "
ENTRY_NODES: list[tuple[str, list[tuple[str, str]], dict[str, Any] | None, list[str]]] = [
    (
        WE + "should return entry node ids from lastInteractive if available",
        [("node1", "chatNode")],
        {"type": "userSelect", "entryNodeIds": ["node2", "node3"], "params": SELECT_PARAMS},
        ["node2", "node3"],
    ),
    (
        WE + "should return systemConfig node ids",
        [("config1", "userGuide"), ("chat1", "chatNode")],
        None,
        ["config1"],
    ),
    (
        WE + "should return workflowStart node ids",
        [("start1", "workflowStart"), ("chat1", "chatNode")],
        None,
        ["start1"],
    ),
    (
        WE + "should return pluginInput node ids",
        [("plugin1", "pluginInput"), ("chat1", "chatNode")],
        None,
        ["plugin1"],
    ),
    (
        WE + "should return tool node ids when no entry nodes exist",
        [("tool1", "tool"), ("chat1", "chatNode")],
        None,
        ["tool1"],
    ),
    (
        WE + "should not return tool node when entry nodes exist",
        [("start1", "workflowStart"), ("tool1", "tool")],
        None,
        ["start1"],
    ),
    (
        WE + "should fall through to node scan when lastInteractive.entryNodeIds is undefined",
        [("start1", "workflowStart")],
        {"type": "userSelect", "entryNodeIds": None, "params": SELECT_PARAMS},
        ["start1"],
    ),
]


def graph_of(nodes: list[tuple[str, str]]) -> Any:
    specs = [{"nodeId": i, "name": i, "flowNodeType": t, "inputs": [], "outputs": []} for i, t in nodes]
    return load_workflow({"nodes": specs, "edges": []}, require_entry=False)


@pytest.mark.parametrize(
    ("name", "nodes", "interactive", "expected"), ENTRY_NODES, ids=[c[0] for c in ENTRY_NODES]
)
def test_get_workflow_entry_node_ids_matches_fastgpt(
    name: str, nodes: list[tuple[str, str]], interactive: dict[str, Any] | None, expected: list[str]
) -> None:
    assert get_workflow_entry_node_ids(graph_of(nodes), interactive) == expected


# ---------------------------------------------------------------- filterWorkflowEdges
def test_filter_workflow_edges_drops_selected_tools_handles() -> None:
    """filterWorkflowEdges > should filter out edges with selectedTools handle / should return all edges
    when no selectedTools handles."""
    edges = [
        RuntimeEdge("n1", "out1", "n2", "in1", "waiting"),
        RuntimeEdge("n1", "selectedTools", "n2", "in2", "waiting"),
        RuntimeEdge("n1", "out2", "n2", "selectedTools", "waiting"),
    ]
    assert [edge for edge in edges if is_control_edge(edge)] == edges[:1]
    plain = [
        RuntimeEdge("n1", "out1", "n2", "in1", "waiting"),
        RuntimeEdge("n2", "out2", "n3", "in2", "active"),
    ]
    assert [edge for edge in plain if is_control_edge(edge)] == plain


# ---------------------------------------------------------------- getReferenceVariableValue
RV = "getReferenceVariableValue > "


def nodes_with(outputs: dict[str, list[tuple[Any, ...]]]) -> dict[str, Any]:
    """Runtime nodes by id; each output ``(id, key, value)`` or ``(id, key, value, valueType)``."""
    specs = [
        {
            "nodeId": node_id,
            "name": node_id,
            "flowNodeType": "chatNode",
            "inputs": [],
            "outputs": [
                {"id": o[0], "key": o[1], "type": "static"} | ({"valueType": o[3]} if len(o) > 3 else {})
                for o in items
            ],
        }
        for node_id, items in outputs.items()
    ]
    nodes = build_runtime_nodes(load_workflow({"nodes": specs, "edges": []}, require_entry=False))
    for node_id, items in outputs.items():
        for output_id, _, value, *_ in items:
            nodes[node_id].outputs_by_id[output_id].value = value
    return nodes


ONE = {"node1": [("out1", "output1", "outputValue")]}
REFERENCES: list[tuple[str, Any, dict[str, Any], dict[str, Any], Any]] = [
    (RV + "should return undefined for undefined value", None, {}, {}, None),
    (
        RV + "should return variable value for VARIABLE_NODE_ID reference",
        [VARIABLE_NODE_ID, "myVar"],
        {},
        {"myVar": "hello"},
        "hello",
    ),
    (
        RV + "should return undefined for VARIABLE_NODE_ID with empty outputId",
        [VARIABLE_NODE_ID, ""],
        {},
        {"myVar": "hello"},
        None,
    ),
    (RV + "should return node output value", ["node1", "out1"], ONE, {}, "outputValue"),
    (
        RV + "should return undefined when output id not found in node",
        ["node1", "nonexistent"],
        ONE,
        {},
        None,
    ),
    (
        RV + "should return original value when node not found",
        ["nonexistent", "out1"],
        {},
        {},
        ["nonexistent", "out1"],
    ),
    (RV + "should return non-reference value as-is", "plain string", {}, {}, "plain string"),
    (
        RV + "should handle array with single reference",
        [["node1", "out1"]],
        {"node1": [("out1", "output1", "v1")]},
        {},
        ["v1"],
    ),
    (
        RV + "should handle array of references",
        [["node1", "out1"], ["node2", "out2"]],
        {"node1": [("out1", "output1", "value1")], "node2": [("out2", "output2", "value2")]},
        {},
        ["value1", "value2"],
    ),
    (
        RV + "should handle array with VARIABLE_NODE_ID references",
        [[VARIABLE_NODE_ID, "var1"], [VARIABLE_NODE_ID, "var2"]],
        {},
        {"var1": "hello", "var2": "world"},
        ["hello", "world"],
    ),
    (
        RV + "should filter undefined values from array result",
        [["node1", "out1"], ["node1", "nonexistent"]],
        {"node1": [("out1", "output1", "value1")]},
        {},
        ["value1"],
    ),
    (
        RV + "should flatten array output values in reference array",
        [["node1", "out1"], ["node2", "out2"]],
        {"node1": [("out1", "output1", ["a", "b"])], "node2": [("out2", "output2", ["c", "d"])]},
        {},
        ["a", "b", "c", "d"],
    ),
    (
        RV + "should handle array with 3+ references",
        [["n1", "o1"], ["n2", "o2"], ["n3", "o3"]],
        {"n1": [("o1", "o1", "r1")], "n2": [("o2", "o2", "r2")], "n3": [("o3", "o3", "r3")]},
        {},
        ["r1", "r2", "r3"],
    ),
    (
        RV + "should support Map as nodesMap",
        ["node1", "out1"],
        {"node1": [("out1", "o1", "mapVal")]},
        {},
        "mapVal",
    ),
]


@pytest.mark.parametrize(
    ("name", "value", "outputs", "variables", "expected"), REFERENCES, ids=[c[0] for c in REFERENCES]
)
def test_get_reference_variable_value_matches_fastgpt(
    name: str, value: Any, outputs: dict[str, Any], variables: dict[str, Any], expected: Any
) -> None:
    assert get_reference_variable_value(value, nodes_with(outputs), variables) == expected


# ---------------------------------------------------------------- formatVariableValByType
FV = "formatVariableValByType > "
OBJ = {"a": 1}
FORMAT_VARIABLE: list[tuple[str, Any, str | None, Any]] = [
    (FV + "should return value as is when no valueType", "test", None, "test"),
    (FV + "should return undefined for null/undefined values", None, "string", None),
    (FV + "should return undefined for array type mismatch", "not array", "arrayString", None),
    (FV + "should convert to boolean", 1, "boolean", True),
    (FV + "should convert to boolean", 0, "boolean", False),
    (FV + "should convert to boolean", "", "boolean", False),
    (FV + "should convert to number", "123", "number", 123),
    (FV + "should convert to number", "3.14", "number", 3.14),
    (FV + "should convert to string", 123, "string", "123"),
    (FV + "should convert to string", {"a": 1}, "string", '{"a":1}'),
    (FV + "should return undefined for object type with non-object value", "string", "object", None),
    (FV + "should return undefined for object type with non-object value", "string", "datasetQuote", None),
    (FV + "should return undefined for object type with non-object value", "string", "selectApp", None),
    (FV + "should return undefined for object type with non-object value", "string", "selectDataset", None),
    (FV + "should return object value as is for object types", OBJ, "object", OBJ),
    (FV + "should return object value as is for object types", OBJ, "datasetQuote", OBJ),
]


@pytest.mark.parametrize(
    ("name", "value", "value_type", "expected"),
    FORMAT_VARIABLE,
    ids=[f"{c[0]} [{i}]" for i, c in enumerate(FORMAT_VARIABLE)],
)
def test_format_variable_val_by_type_matches_fastgpt(
    name: str, value: Any, value_type: str | None, expected: Any
) -> None:
    assert same(format_variable_val_by_type(value, value_type), expected)


# ---------------------------------------------------------------- replaceEditorVariable
RE = "replaceEditorVariable > "
EDITOR: list[tuple[str, Any, dict[str, Any], dict[str, Any], Any]] = [
    (RE + "should return non-string values as is", 123, {}, {}, 123),
    (RE + "should return non-string values as is", None, {}, {}, None),
    (RE + "should return empty string as is", "", {}, {}, ""),
    (RE + "should replace global variables", "Hello {{name}}", {}, {"name": "World"}, "Hello World"),
    (RE + "should replace node output variables", "Result: {{$node1.out1$}}", ONE, {}, "Result: outputValue"),
    (
        RE + "should replace VARIABLE_NODE_ID variables",
        f"Value: {{{{${VARIABLE_NODE_ID}.myVar$}}}}",
        {},
        {"myVar": "varValue"},
        "Value: varValue",
    ),
    (
        RE + "should handle nested variable replacement",
        "Result: {{$node1.out1$}}",
        {"node1": [("out1", "output1", "{{$node2.out2$}}")], "node2": [("out2", "output2", "finalValue")]},
        {},
        "Result: finalValue",
    ),
    (
        RE + "should handle circular reference protection",
        "Result: {{$node1.out1$}}",
        {"node1": [("out1", "output1", "{{$node1.out1$}}")]},
        {},
        "Result: {{$node1.out1$}}",
    ),
]


EDITOR += [
    (
        RE + "should convert object values to string",
        "Object: {{$node1.out1$}}",
        {"node1": [("out1", "output1", {"a": 1}, "object")]},
        {},
        'Object: {"a":1}',
    ),
    (RE + "should keep original pattern when node not found", "{{$nonexistent.out$}}", {}, {}, ""),
    (
        RE + "should skip duplicate variable pattern in the same text",
        "{{$node1.out1$}} and {{$node1.out1$}}",
        {"node1": [("out1", "output1", "val")]},
        {},
        "val and val",
    ),
    (
        RE + "should support Map as nodesMap",
        "Result: {{$node1.out1$}}",
        {"node1": [("out1", "output1", "mapValue")]},
        {},
        "Result: mapValue",
    ),
    (
        RE + "should handle $ special characters in variable values literally",
        f"Value: {{{{${VARIABLE_NODE_ID}.myVar$}}}}",
        {},
        {"myVar": "$& some text"},
        "Value: $& some text",
    ),
    (
        RE + "should handle $ special characters in variable values literally",
        f"Price: {{{{${VARIABLE_NODE_ID}.price$}}}}",
        {},
        {"price": "$100"},
        "Price: $100",
    ),
    (
        RE + "should handle $ special characters in variable values literally",
        f"Code: {{{{${VARIABLE_NODE_ID}.code$}}}}",
        {},
        {"code": "$$"},
        "Code: $$",
    ),
]


def test_replace_editor_variable_stops_at_max_depth() -> None:
    """replaceEditorVariable > should handle max depth protection."""
    assert replace_editor_variable("test", {}, {}, depth=15) == "test"


def test_replace_editor_variable_reads_a_node_input() -> None:
    """replaceEditorVariable > should handle node input as variable source."""
    spec = {
        "nodeId": "node1",
        "name": "test",
        "flowNodeType": "chatNode",
        "outputs": [],
        "inputs": [{"key": "myInput", "label": "", "renderTypeList": [], "value": "inputValue"}],
    }
    nodes = build_runtime_nodes(load_workflow({"nodes": [spec], "edges": []}, require_entry=False))
    assert replace_editor_variable("Input: {{$node1.myInput$}}", nodes, {}) == "Input: inputValue"


@pytest.mark.parametrize(
    ("name", "text", "outputs", "variables", "expected"),
    EDITOR,
    ids=[f"{c[0]} [{i}]" for i, c in enumerate(EDITOR)],
)
def test_replace_editor_variable_matches_fastgpt(
    name: str, text: Any, outputs: dict[str, Any], variables: dict[str, Any], expected: Any
) -> None:
    assert replace_editor_variable(text, nodes_with(outputs), variables) == expected


# ---------------------------------------------------------------- textAdaptGptResponse
TA = "textAdaptGptResponse > "


def test_text_adapt_gpt_response_matches_fastgpt() -> None:
    assert text_adapt_gpt_response("Hello") == {  # should create GPT response format with text
        "id": "",
        "object": "",
        "created": 0,
        "model": "",
        "choices": [{"delta": {"role": "assistant", "content": "Hello"}, "index": 0, "finish_reason": None}],
    }
    # should include reasoning_content / model / finish_reason when provided
    assert text_adapt_gpt_response("Hello", reasoning="Thinking...")["choices"][0]["delta"][
        "reasoning_content"
    ] == ("Thinking...")
    assert text_adapt_gpt_response("Hello", model="gpt-4")["model"] == "gpt-4"
    assert text_adapt_gpt_response("Hello", finish_reason="stop")["choices"][0]["finish_reason"] == "stop"
    # should handle null text / undefined text (both None here)
    assert text_adapt_gpt_response(None)["choices"][0]["delta"]["content"] is None
    # "should include extraData when provided" is not mapped: Fathom's chunks carry no caller extras (the SSE
    # projections build their own payloads), so the function has no such parameter.


# ---------------------------------------------------------------- rewriteNodeOutputByHistories
RW = "rewriteNodeOutputByHistories > "
ORIGINAL = {"node1": [("out1", "output1", "original")]}
TWO_NODES = {
    "node1": [("out1", "output1", "original1"), ("out2", "output2", "original2")],
    "node2": [("out3", "output3", "original3")],
}
REWRITES: list[tuple[str, dict[str, Any], dict[str, Any] | None, dict[tuple[str, str], Any]]] = [
    (
        RW + "should return nodes as is when no lastInteractive",
        ORIGINAL,
        None,
        {("node1", "out1"): "original"},
    ),
    (
        RW + "should return nodes as is when lastInteractive has no nodeOutputs",
        ORIGINAL,
        {"type": "userSelect", "entryNodeIds": ["node1"], "nodeOutputs": None},
        {("node1", "out1"): "original"},
    ),
    (
        RW + "should rewrite node outputs from lastInteractive",
        ORIGINAL,
        {"type": "userSelect", "nodeOutputs": [{"nodeId": "node1", "key": "output1", "value": "newValue"}]},
        {("node1", "out1"): "newValue"},
    ),
    (
        RW + "should keep original value when no matching nodeOutput",
        ORIGINAL,
        {"type": "userSelect", "nodeOutputs": [{"nodeId": "node2", "key": "output2", "value": "newValue"}]},
        {("node1", "out1"): "original"},
    ),
    (
        RW + "should handle multiple nodes and outputs",
        TWO_NODES,
        {
            "type": "userSelect",
            "nodeOutputs": [
                {"nodeId": "node1", "key": "output1", "value": "new1"},
                {"nodeId": "node2", "key": "output3", "value": "new3"},
            ],
        },
        {("node1", "out1"): "new1", ("node1", "out2"): "original2", ("node2", "out3"): "new3"},
    ),
]


@pytest.mark.parametrize(
    ("name", "outputs", "interactive", "expected"), REWRITES, ids=[c[0] for c in REWRITES]
)
def test_rewrite_node_output_by_histories_matches_fastgpt(
    name: str,
    outputs: dict[str, Any],
    interactive: dict[str, Any] | None,
    expected: dict[tuple[str, str], Any],
) -> None:
    nodes = nodes_with(outputs)
    rewrite_node_output_by_histories(nodes, interactive)
    assert {key: nodes[key[0]].outputs_by_id[key[1]].value for key in expected} == expected
