"""Apps used as tools (a Tool Call node's or an Agent node's ``appModule`` tool) through
``/api/v1/chat/completions``: the child run sees only the files selected for it under the parent's quota,
its tokens roll up to the parent's usage, and the version it runs is the node's setting (a pinned
version of that app, else the published one)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from chat_support import MODEL, ChatServer, simple_app_body

from fathom.testing import ScriptedOpenAIServer, text_turn, tool_call_turn
from workflow_json import START, answer, edge, tool_caller, tool_edge


def _answer_app(text: str) -> dict[str, Any]:
    return {"nodes": [START, answer("say", text)], "edges": [edge("start", "say")], "chatConfig": {}}


def app_tool(child_id: str, version: str = "") -> dict[str, Any]:
    """An ``appModule`` tool node (as the editor saves an app picked as a tool)."""
    return {
        "nodeId": "helper",
        "name": "helper",
        "flowNodeType": "appModule",
        "pluginId": child_id,
        "version": version,
        "toolDescription": "Ask the helper app",
        "inputs": [
            {"key": "userChatInput", "valueType": "string", "toolDescription": "the task", "required": True},
            {"key": "history", "value": 0, "valueType": "chatHistory"},
            {"key": "system_forbid_stream", "value": True, "valueType": "boolean"},
        ],
        "outputs": [{"id": "answerText", "key": "answerText", "valueType": "string"}],
    }


def caller_app(server: ChatServer, caller_type: str, tool: dict[str, Any], max_files: int = 5) -> str:
    caller = tool_caller(caller_type, MODEL)
    workflow = {
        "nodes": [START, caller, tool],
        "edges": [edge("start", "caller"), tool_edge("caller", tool["nodeId"])],
        "chatConfig": {"fileSelectConfig": {"canSelectFile": True, "maxFiles": max_files}},
    }
    return server.create_app({"name": f"{caller_type} desk", "type": "advanced", **workflow})


def _ask(server: ChatServer, app_id: str, *files: str) -> dict[str, Any]:
    parts = [{"type": "file_url", "name": n, "url": f"https://files.example/{n}"} for n in files]
    content = [{"type": "text", "text": "please help"}, *parts]
    body = {"appId": app_id, "messages": [{"role": "user", "content": content}]}
    with server.client() as client:
        reply: dict[str, Any] = client.post("/api/v1/chat/completions", json=body).json()
    return reply


def _tool_reply(scripted: ScriptedOpenAIServer) -> str:
    message = next(m for m in scripted.chat_requests[-1]["messages"] if m["role"] == "tool")
    return str(message["content"]).strip()  # an answer node starts its text on a new line


@pytest.mark.parametrize("caller_type", ["tools", "agent"])
def test_an_app_used_as_a_tool_sees_only_the_files_selected_under_the_parents_quota(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer, caller_type: str
) -> None:
    child = chat_server.create_app(
        {"name": "Lister", "type": "advanced", **_answer_app("FILES={{$start.userFiles$}}")}
    )
    app_id = caller_app(chat_server, caller_type, app_tool(child), max_files=2)
    scripted.clear()
    scripted.set_script([tool_call_turn([("helper", {"userChatInput": "list"})]), text_turn("Listed.")])
    reply = _ask(chat_server, app_id, "a.pdf", "b.pdf", "c.pdf")
    assert reply["choices"][0]["message"]["content"] == "Listed."
    listed = json.loads(_tool_reply(scripted).removeprefix("FILES="))
    assert [url.rsplit("/", 1)[-1] for url in listed] == ["a.pdf", "b.pdf"]


@pytest.mark.parametrize("caller_type", ["tools", "agent"])
def test_the_tokens_of_an_app_used_as_a_tool_roll_up_to_the_parents_usage(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer, caller_type: str
) -> None:
    child = chat_server.create_app(simple_app_body("Talker"))
    app_id = caller_app(chat_server, caller_type, app_tool(child))
    scripted.clear()
    scripted.set_script(
        [
            tool_call_turn([("helper", {"userChatInput": "say hi"})], usage=(100, 10)),
            text_turn("Hi from the child.", usage=(7000, 800)),
            text_turn("The child said hi.", usage=(50, 5)),
        ]
    )
    reply = _ask(chat_server, app_id)
    assert reply["choices"][0]["message"]["content"] == "The child said hi."
    assert _tool_reply(scripted) == "Hi from the child."
    with chat_server.client() as client:
        summary = client.get("/api/support/usage/summary", params={"appId": app_id}).json()["data"]
    assert (summary["total"]["inputTokens"], summary["total"]["outputTokens"]) == (7150, 815)


def test_an_app_tool_runs_the_version_its_node_pins_else_the_published_one(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    child = chat_server.create_app({"name": "Versioned", "type": "advanced", **_answer_app("ONE")})
    with chat_server.client() as client:
        first = client.post("/api/core/app/version/list", json={"appId": child, "pageSize": 10}).json()
        one = first["data"]["list"][0]["_id"]
        published = client.post(
            "/api/core/app/version/publish", json={"appId": child, "versionName": "two", **_answer_app("TWO")}
        ).json()
        assert published["code"] == 200, published
    other = chat_server.create_app({"name": "Other", "type": "advanced", **_answer_app("OTHER")})
    with chat_server.client() as client:
        other_version = client.post(
            "/api/core/app/version/list", json={"appId": other, "pageSize": 10}
        ).json()
    foreign = other_version["data"]["list"][0]["_id"]

    for pinned, expected in ((one, "ONE"), ("", "TWO"), (foreign, "TWO"), ("no-such-version", "TWO")):
        app_id = caller_app(chat_server, "tools", app_tool(child, version=pinned))
        scripted.clear()
        scripted.set_script([tool_call_turn([("helper", {"userChatInput": "which?"})]), text_turn("ok")])
        _ask(chat_server, app_id)
        assert _tool_reply(scripted) == expected, pinned
