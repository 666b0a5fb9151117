"""Workflow-tool (plugin) apps over the chat API, and ``responseChatItemId`` rules."""

from __future__ import annotations

from typing import Any

from chat_support import ChatServer, simple_app_body

from fathom.testing import ScriptedOpenAIServer, text_turn

PLUGIN = {
    "nodes": [
        {
            "nodeId": "in",
            "name": "插件开始",
            "flowNodeType": "pluginInput",
            "inputs": [{"key": "city", "value": "", "valueType": "string", "renderTypeList": ["input"]}],
            "outputs": [{"id": "city", "key": "city", "valueType": "string"}],
        },
        {
            "nodeId": "out",
            "name": "插件输出",
            "flowNodeType": "pluginOutput",
            "inputs": [{"key": "greeting", "value": "Hello {{$in.city$}}", "valueType": "string"}],
            "outputs": [],
        },
    ],
    "edges": [
        {
            "source": "in",
            "target": "out",
            "sourceHandle": "in-source-right",
            "targetHandle": "out-target-left",
        }
    ],
    "chatConfig": {},
}


def post(chat_server: ChatServer, body: dict[str, Any]) -> Any:
    with chat_server.client() as client:
        return client.post("/api/v1/chat/completions", json=body)


def test_plugin_app_takes_inputs_from_variables_and_forces_detail(chat_server: ChatServer) -> None:
    app = chat_server.create_app({"name": "Greeter", "type": "plugin", **PLUGIN})
    reply = post(chat_server, {"appId": app, "variables": {"city": "Lyon"}}).json()
    output = next(r for r in reply["responseData"] if r["moduleType"] == "pluginOutput")
    assert output["pluginOutput"] == {"greeting": "Hello Lyon"}
    assert "city" not in reply["newVariables"]  # plugin inputs are not global variables


def test_response_chat_item_id_names_the_stored_answer_and_must_be_new(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    app = chat_server.create_app(simple_app_body("Ids"))
    scripted.set_script([text_turn("one"), text_turn("two")])
    body = {
        "appId": app,
        "chatId": "ids",
        "responseChatItemId": "answer-1",
        "messages": [{"role": "user", "content": "q"}],
    }
    assert post(chat_server, body).status_code == 200
    with chat_server.client() as client:
        res = client.get(
            "/api/core/chat/getResData", params={"appId": app, "chatId": "ids", "dataId": "answer-1"}
        )
    assert [r["moduleType"] for r in res.json()["data"]] == ["workflowStart", "chatNode"]
    again = post(chat_server, body)
    assert again.status_code == 409 and "answer-1" in again.json()["message"]
    assert scripted.remaining_turns == 1  # refused before the model was called
