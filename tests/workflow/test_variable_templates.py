"""References, ``{{key}}`` / ``{{$node.key$}}`` templates, system variables and history selection."""

from __future__ import annotations

from typing import Any

import pytest
from wf_builders import output

from fathom.workflow import (
    WorkflowNode,
    get_histories,
    get_reference_variable_value,
    remove_system_variable,
    replace_editor_variable,
    replace_variable,
)
from fathom.workflow.runtime import RuntimeNode, build_runtime_node


def make_node(
    node_id: str, outputs: dict[str, tuple[str, Any]], inputs: list[dict[str, Any]] | None = None
) -> RuntimeNode:
    node = build_runtime_node(
        WorkflowNode.model_validate(
            {
                "nodeId": node_id,
                "flowNodeType": "answerNode",
                "inputs": inputs or [],
                "outputs": [output(key, vt) for key, (vt, _) in outputs.items()],
            }
        )
    )
    for item in node.outputs:
        item.value = outputs[item.key][1]
    return node


NODES = {
    "n1": make_node(
        "n1",
        {"text": ("string", "hello"), "list": ("arrayString", ["a", "b"]), "obj": ("object", {"k": 1})},
        inputs=[{"key": "src", "value": ["n2", "num"], "renderTypeList": ["reference"]}],
    ),
    "n2": make_node(
        "n2",
        {"num": ("number", 7), "loop": ("string", "{{$n2.loop$}}"), "nested": ("string", "{{$n1.text$}}!")},
    ),
}
VARIABLES = {"name": "Ann", "count": 3, "flag": True, "self": "{{self}}", "cTime": "now"}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (["n1", "text"], "hello"),
        (["VARIABLE_NODE_ID", "name"], "Ann"),
        (["VARIABLE_NODE_ID", "missing"], None),
        (["n1", "nope"], None),
        (["unknown", "x"], ["unknown", "x"]),  # two-string array literal survives
        ([["n1", "list"], ["n2", "num"], ["n1", "nope"]], ["a", "b", 7]),  # flattened, missing dropped
        ("plain", "plain"),
        ("", ""),
        (None, None),
    ],
)
def test_reference_resolution(value: Any, expected: Any) -> None:
    assert get_reference_variable_value(value, NODES, VARIABLES) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hi {{name}}, {{count}} {{flag}}", "Hi Ann, 3 true"),
        ("{{unknown}} stays", "{{unknown}} stays"),
        ("{{$n1.text$}} / {{$n1.obj$}} / {{$n1.list$}}", 'hello / {"k":1} / ["a","b"]'),
        ("{{$VARIABLE_NODE_ID.name$}}", "Ann"),
        ("{{$n1.src$}}", "7"),  # falls back to the node's input, resolved as a reference
        ("{{$n1.nope$}} {{$ghost.x$}}", " "),  # unresolved renders as nothing (FastGPT valToStr)
        ("{{$n2.nested$}}", "hello!"),  # nested template expanded
        ("{{$n2.loop$}}", "{{$n2.loop$}}"),  # self reference left alone
        ("{{self}}", "{{self}}"),
        ("", ""),
    ],
)
def test_editor_templates(text: str, expected: str) -> None:
    assert replace_editor_variable(text, NODES, VARIABLES) == expected


def test_non_string_template_values_pass_through() -> None:
    assert replace_editor_variable(["n1", "text"], NODES, VARIABLES) == ["n1", "text"]
    assert replace_variable(5, VARIABLES) == 5


def test_template_chain_depth_is_bounded() -> None:
    chain = {f"v{i}": "{{v" + str(i + 1) + "}}" for i in range(30)}
    chain["v30"] = "end"
    rendered = replace_variable("{{v0}}", chain)
    assert rendered != "end" and rendered.startswith("{{v")


def test_system_variables_are_stripped_from_returned_variables() -> None:
    variables = {
        "userId": "u",
        "appId": "a",
        "chatId": "c",
        "responseChatItemId": "r",
        "histories": [],
        "cTime": "t",
        "mine": 1,
        "ext": 2,
    }
    assert remove_system_variable(variables, external_keys=["ext"]) == {"mine": 1}


HISTORY = [
    {"obj": "System", "value": "sys"},
    {"obj": "Human", "value": "q1"},
    {"obj": "AI", "value": "a1"},
    {"obj": "Human", "value": "q2"},
    {"obj": "AI", "value": "a2"},
]


@pytest.mark.parametrize(
    ("selection", "expected"),
    [
        (1, ["sys", "q2", "a2"]),
        (2, ["sys", "q1", "a1", "q2", "a2"]),
        (10, ["sys", "q1", "a1", "q2", "a2"]),
        (0, []),
        (None, []),
        ([{"obj": "Human", "value": "custom"}], ["sys", "custom"]),
    ],
)
def test_history_selection(selection: Any, expected: list[str]) -> None:
    assert [item["value"] for item in get_histories(selection, HISTORY)] == expected
