"""The workflow checks before publishing (``fathom.workflow.check``): each FastGPT rule, and Fathom's
additions, on a small graph that breaks exactly that rule; a sound graph has no problem."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from wf_builders import answer, cond, edge, group, if_else, node_input, output, start, workflow

from fathom.workflow import load_workflow
from fathom.workflow.check import ModelCatalog, check_workflow_graph, describe_problems, has_errors

MODELS = ModelCatalog(chat_models={"scripted-chat"}, default_chat_model="scripted-chat")


def chat(node_id: str = "chat", question: Any = None, model: str = "scripted-chat") -> dict[str, Any]:
    """FastGPT's AI chat node; ``question`` None: the required "User question" is unset."""
    user_input = node_input("userChatInput", question, render="reference", required=True)
    user_input["renderTypeList"] = ["reference", "textarea"]
    user_input["label"] = "User question"
    if question is None:
        del user_input["value"]
    return {
        "nodeId": node_id,
        "name": "AI chat",
        "flowNodeType": "chatNode",
        "inputs": [
            node_input("model", model, render="settingLLMModel"),
            node_input("systemPrompt", "", render="textarea"),
            user_input,
        ],
        "outputs": [output("answerText"), output("history", "chatHistory")],
    }


QUESTION = ["start", "userChatInput"]


def sound() -> dict[str, Any]:
    return workflow([start(), chat(question=QUESTION)], [edge("start", "chat")])


def problems(document: dict[str, Any], models: ModelCatalog | None = MODELS) -> list[tuple[str, str, str]]:
    found = check_workflow_graph(load_workflow(document), models=models)
    return [(p.node_id, p.field, p.level) for p in found]


def test_a_sound_workflow_has_no_problem() -> None:
    assert problems(sound()) == []


def test_the_issue_scenario_unconnected_ai_chat_with_its_question_unset() -> None:
    document = workflow([start(), chat()], [])
    graph = load_workflow(document)
    found = check_workflow_graph(graph, models=MODELS)
    assert [(p.node_id, p.field, p.level) for p in found] == [
        ("chat", "", "error"),
        ("chat", "userChatInput", "error"),
    ]
    assert has_errors(found)
    text = describe_problems(graph, found)
    assert "node 'AI chat' (chat): not connected" in text
    assert "User question is required and not set: choose an upstream output" in text


def with_node(extra: dict[str, Any], *edges: dict[str, Any]) -> dict[str, Any]:
    document = sound()
    document["nodes"].append(extra)
    document["edges"].extend(edges)
    return document


def answer_with(text: Any, render: str = "textarea", value_type: str = "any", **extra: Any) -> dict[str, Any]:
    node = answer("reply", text)
    node["inputs"] = [node_input("text", text, value_type, render=render, **extra)]
    return node


CASES: dict[str, tuple[dict[str, Any], list[tuple[str, str, str]]]] = {
    "reference to a node that does not exist": (
        with_node(answer_with(["gone", "answerText"], "reference", "string"), edge("chat", "reply")),
        [("reply", "text", "error")],
    ),
    "reference to an output the node lacks": (
        with_node(answer_with(["chat", "nope"], "reference", "string"), edge("chat", "reply")),
        [("reply", "text", "error")],
    ),
    "text reference to a missing node": (
        with_node(answer_with("Answer: {{$gone.answerText$}}"), edge("chat", "reply")),
        [("reply", "text", "error")],
    ),
    "text reference that resolves": (
        with_node(answer_with("Answer: {{$chat.answerText$}}"), edge("chat", "reply")),
        [],
    ),
    "reference to a node that is not upstream": (
        with_node(answer_with(["chat", "answerText"], "reference", "string"), edge("start", "reply")),
        [("reply", "text", "warning")],
    ),
    "reference of an incompatible type": (
        with_node(answer_with(["chat", "history"], "reference", "string"), edge("chat", "reply")),
        [("reply", "text", "warning")],
    ),
    "a global variable reference is never refused": (
        with_node(answer_with(["VARIABLE_NODE_ID", "city"], "reference", "string"), edge("chat", "reply")),
        [],
    ),
    "required input left empty": (
        with_node(answer_with("", "input", "string", required=True), edge("chat", "reply")),
        [("reply", "text", "error")],
    ),
    "required reference input given a literal where it also takes text": (
        with_node(
            answer_with(
                "fixed question",
                "reference",
                "string",
                required=True,
                renderTypeList=["reference", "textarea"],
            ),
            edge("chat", "reply"),
        ),
        [],
    ),
    "required reference-only input given a literal": (
        with_node(answer_with(7, "reference", "number", required=True), edge("chat", "reply")),
        [("reply", "text", "error")],
    ),
    "required input of type any is exempt": (
        with_node(answer_with("", "input", "any", required=True), edge("chat", "reply")),
        [],
    ),
    "node with no edge": (with_node(answer("reply", "hi")), [("reply", "", "error")]),
    "if/else with a condition missing its value": (
        with_node(
            if_else("branch", [group(cond(QUESTION, "equalTo", None))]),
            edge("chat", "branch"),
        ),
        [("branch", "ifElseList", "error")],
    ),
    "if/else that is complete": (
        with_node(if_else("branch", [group(cond(QUESTION, "isEmpty", None))]), edge("chat", "branch")),
        [],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_rule_on_the_graph_that_breaks_it(name: str) -> None:
    document, expected = CASES[name]
    assert problems(copy.deepcopy(document)) == expected


def test_a_cycle_without_a_branch_never_ends_but_one_through_if_else_may() -> None:
    spin = workflow(
        [start(), answer("a", "x"), answer("b", "y")],
        [edge("start", "a"), edge("a", "b"), edge("b", "a")],
    )
    assert problems(spin) == [("a", "", "error")]
    exits = workflow(
        [start(), answer("a", "x"), if_else("b", [group(cond(QUESTION, "isEmpty", None))])],
        [edge("start", "a"), edge("a", "b"), edge("b", "a", "IF")],
    )
    assert problems(exits) == []


def test_models_unknown_fall_back_to_the_default_as_a_warning() -> None:
    document = workflow([start(), chat(question=QUESTION, model="gpt-4o-mini")], [edge("start", "chat")])
    found = check_workflow_graph(load_workflow(document), models=MODELS)
    assert [(p.field, p.level) for p in found] == [("model", "warning")]
    assert "runs use the default chat model 'scripted-chat'" in found[0].problem
    assert not has_errors(found)
    bare = ModelCatalog(chat_models=(), default_chat_model=None)
    assert (
        "this server has no chat model"
        in check_workflow_graph(load_workflow(document), models=bare)[0].problem
    )
    assert problems(document, models=None) == []  # no catalogue given: models are not checked


def test_tool_call_without_tools_and_tool_inputs_the_model_fills() -> None:
    tools = {
        "nodeId": "tools",
        "name": "Tool call",
        "flowNodeType": "tools",
        "inputs": [node_input("model", "scripted-chat", render="settingLLMModel")],
        "outputs": [output("answerText")],
    }
    lonely = with_node(tools, edge("chat", "tools"))
    assert problems(lonely) == [("tools", "selectedTools", "warning")]  # it answers, as a plain model call
    tool = answer_with("", "input", "string", required=True, toolDescription="what to say")
    tool_edge = {
        "source": "tools",
        "target": "reply",
        "sourceHandle": "tools-source-selectedTools",
        "targetHandle": "selectedTools",
    }
    armed = copy.deepcopy(lonely)
    armed["nodes"].append(tool)
    armed["edges"].append(tool_edge)
    assert problems(armed) == []  # the required input is the tool's argument: the model fills it
