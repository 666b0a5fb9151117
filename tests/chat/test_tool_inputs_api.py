"""The tool-input runtime on the product path: a workflow app whose Tool Call node has tool nodes wired
by ``selectedTools`` edges, run through ``/api/v1/chat/completions`` against the scripted model.

What the model was offered (the scripted server's request log) must never contain dataset, file, model
or password inputs; a model argument must never replace an input the builder fixed; a tool node whose
required field is empty is not offered, and the app detail reports it as waiting for configuration."""

from __future__ import annotations

import json
from typing import Any

from chat_support import MODEL, ChatServer

from fathom.testing import ScriptedOpenAIServer, text_turn, tool_call_turn
from workflow_json import START_TEXT, edge, tool_edge

CALLER = {
    "nodeId": "tc",
    "name": "Caller",
    "flowNodeType": "tools",
    "inputs": [
        {"key": "model", "value": MODEL},
        {"key": "history", "value": 0, "valueType": "chatHistory"},
        {"key": "userChatInput", "value": ["start", "userChatInput"]},
    ],
    "outputs": [{"id": "answerText", "key": "answerText", "valueType": "string"}],
}


def lookup_tool() -> dict[str, Any]:
    """A tool with one model parameter, a fixed one, a dataset, a model, a file and a password input
    (all of them carrying a ``toolDescription``, as an older editor would have saved them)."""
    return {
        "nodeId": "lookup",
        "name": "lookup",
        "flowNodeType": "toolParams",
        "toolDescription": "Look an order up",
        "inputs": [
            {"key": "order", "valueType": "string", "toolDescription": "the order number", "required": True},
            {
                "key": "mode",
                "valueType": "string",
                "renderTypeList": ["input"],
                "selectedType": "input",
                "value": "FIXED",
                "toolDescription": "the lookup mode",
            },
            {
                "key": "datasets",
                "valueType": "selectDataset",
                "renderTypeList": ["selectDataset"],
                "value": [{"datasetId": "kb-1"}],
                "toolDescription": "the knowledge bases",
            },
            {
                "key": "llm",
                "valueType": "string",
                "renderTypeList": ["selectLLMModel"],
                "value": MODEL,
                "toolDescription": "the model",
            },
            {
                "key": "files",
                "valueType": "arrayString",
                "renderTypeList": ["fileSelect"],
                "toolDescription": "files",
            },
            {
                "key": "token",
                "valueType": "string",
                "renderTypeList": ["password"],
                "toolDescription": "the API token",
            },
        ],
        "outputs": [{"id": "order", "key": "order", "valueType": "string"}],
    }


def unconfigured_tool() -> dict[str, Any]:
    """A tool whose required fixed field the builder left empty."""
    return {
        "nodeId": "pending",
        "name": "pending",
        "flowNodeType": "toolParams",
        "toolDescription": "Needs a region first",
        "inputs": [
            {"key": "q", "valueType": "string", "toolDescription": "the query"},
            {
                "key": "region",
                "valueType": "string",
                "renderTypeList": ["input"],
                "selectedType": "input",
                "required": True,
                "value": "",
            },
        ],
        "outputs": [],
    }


def tool_app(chat_server: ChatServer, caller_type: str = "tools") -> str:
    workflow = {
        "nodes": [START_TEXT, {**CALLER, "flowNodeType": caller_type}, lookup_tool(), unconfigured_tool()],
        "edges": [
            edge("start", "tc"),
            tool_edge("tc", "lookup"),
            tool_edge("tc", "pending"),
        ],
        "chatConfig": {},
    }
    return chat_server.create_app({"name": "Orders", "type": "advanced", **workflow})


def _ask(chat_server: ChatServer, app_id: str) -> dict[str, Any]:
    with chat_server.client() as client:
        body = {"appId": app_id, "detail": True, "messages": [{"role": "user", "content": "where is A-7?"}]}
        reply: dict[str, Any] = client.post("/api/v1/chat/completions", json=body).json()
    return reply


def test_model_sees_only_generated_inputs_and_cannot_overwrite_fixed_ones(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    app_id = tool_app(chat_server)
    injected = {"order": "A-7", "mode": "INJECTED-BY-MODEL", "token": "stolen", "datasets": ["kb-evil"]}
    scripted.clear()
    scripted.set_script([tool_call_turn([("lookup", injected)]), text_turn("It ships today.")])
    reply = _ask(chat_server, app_id)
    content = reply["choices"][0]["message"]["content"]
    assert [item["text"]["content"] for item in content if item["type"] == "text"] == ["It ships today."]

    first, second = scripted.chat_requests[-2:]
    offered = {tool["function"]["name"]: tool["function"] for tool in first["tools"]}
    assert list(offered) == ["lookup"]  # the unconfigured tool is not offered
    parameters = offered["lookup"]["parameters"]
    assert list(parameters["properties"]) == ["order"]
    assert parameters["required"] == ["order"]
    sent = json.dumps(first["tools"])
    for hidden in ("datasets", "token", "llm", "files", "mode", "kb-1"):
        assert hidden not in sent

    tool_message = next(m for m in second["messages"] if m["role"] == "tool")
    ran_with = json.loads(tool_message["content"])
    assert ran_with["order"] == "A-7"
    assert ran_with["mode"] == "FIXED"  # the builder's value, not the model's
    assert ran_with["datasets"] == [{"datasetId": "kb-1"}]
    assert "stolen" not in tool_message["content"]

    detail = next(r for r in reply["responseData"] if r.get("moduleType") == "tools")
    assert detail["toolDetail"][0]["toolParamsResult"]["mode"] == "FIXED"


def test_under_an_agent_node_the_model_sees_only_generated_inputs_and_cannot_overwrite_fixed_ones(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    app_id = tool_app(chat_server, "agent")
    injected = {"order": "A-7", "mode": "INJECTED-BY-MODEL", "token": "stolen", "datasets": ["kb-evil"]}
    scripted.clear()
    scripted.set_script([tool_call_turn([("lookup", injected)]), text_turn("It ships today.")])
    _ask(chat_server, app_id)

    first, second = scripted.chat_requests[-2:]
    offered = {tool["function"]["name"]: tool["function"] for tool in first["tools"]}
    assert "lookup" in offered and "pending" not in offered  # the unconfigured tool is not offered
    parameters = offered["lookup"]["parameters"]
    assert list(parameters["properties"]) == ["order"]
    sent = json.dumps(offered["lookup"])
    for hidden in ("datasets", "token", "llm", "files", "mode", "kb-1"):
        assert hidden not in sent

    tool_message = next(m for m in second["messages"] if m["role"] == "tool")
    ran_with = json.loads(tool_message["content"])
    assert (ran_with["order"], ran_with["mode"]) == ("A-7", "FIXED")
    assert ran_with["datasets"] == [{"datasetId": "kb-1"}]
    assert "stolen" not in tool_message["content"]


def test_app_detail_reports_tools_waiting_for_configuration(chat_server: ChatServer) -> None:
    app_id = tool_app(chat_server)
    with chat_server.client() as client:
        detail = client.get("/api/core/app/detail", params={"appId": app_id}).json()["data"]
    # lookup's dataset, model, file and password inputs carry a tool description (an older editor's
    # way of marking model parameters): they never reach the model, and the editor is told so
    assert detail["toolConfigStatus"] == {
        "lookup": {"needConfig": False, "status": "configured", "valid": False, "invalidInputs": []},
        "pending": {"needConfig": True, "status": "waitingForConfig", "valid": True, "invalidInputs": []},
    }


def test_arguments_that_are_not_json_come_back_as_one_error_naming_the_missing_field(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    app_id = tool_app(chat_server)
    scripted.clear()
    scripted.set_script(
        [
            tool_call_turn([("lookup", "order = A-7")]),
            tool_call_turn([("lookup", {"order": "A-7"})]),
            text_turn("Found it."),
        ]
    )
    _ask(chat_server, app_id)
    retry, done = scripted.chat_requests[-2:]
    first_result = [m for m in retry["messages"] if m["role"] == "tool"][-1]["content"]
    assert first_result == "Tool input validation failed: / must have required property 'order'"
    second_result = [m for m in done["messages"] if m["role"] == "tool"][-1]["content"]
    assert json.loads(second_result)["order"] == "A-7"
