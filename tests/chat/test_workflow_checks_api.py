"""Workflow checks over HTTP (issue 31): a broken workflow saves with its problems answered, its publish
is refused with the list ``{nodeId, field, problem, level}``, create and import refuse it too (nothing
stored), and the fixed workflow publishes and answers through ``/api/v1/chat/completions``."""

from __future__ import annotations

from typing import Any

from chat_support import MODEL, ChatServer

from fathom.testing import ScriptedOpenAIServer, text_turn


def start() -> dict[str, Any]:
    return {
        "nodeId": "workflowStartNodeId",
        "name": "Start",
        "flowNodeType": "workflowStart",
        "inputs": [
            {"key": "userChatInput", "renderTypeList": ["reference", "textarea"], "valueType": "string"}
        ],
        "outputs": [{"id": "userChatInput", "key": "userChatInput", "valueType": "string", "type": "static"}],
    }


def ai_chat(question: Any = None) -> dict[str, Any]:
    """The editor's AI chat node; ``question`` None: its required "User question" is unset."""
    user_input: dict[str, Any] = {
        "key": "userChatInput",
        "label": "User question",
        "renderTypeList": ["reference", "textarea"],
        "valueType": "string",
        "required": True,
    }
    if question is not None:
        user_input["value"] = question
    return {
        "nodeId": "aiChat",
        "name": "AI chat",
        "flowNodeType": "chatNode",
        "inputs": [
            {"key": "model", "renderTypeList": ["settingLLMModel"], "valueType": "string", "value": MODEL},
            user_input,
        ],
        "outputs": [{"id": "answerText", "key": "answerText", "valueType": "string", "type": "static"}],
    }


EDGE = {
    "source": "workflowStartNodeId",
    "target": "aiChat",
    "sourceHandle": "workflowStartNodeId-source-right",
    "targetHandle": "aiChat-target-left",
}
BROKEN = {"nodes": [start(), ai_chat()], "edges": [], "chatConfig": {}}
FIXED = {
    "nodes": [start(), ai_chat(["workflowStartNodeId", "userChatInput"])],
    "edges": [EDGE],
    "chatConfig": {},
}


def post(server: ChatServer, path: str, body: dict[str, Any]) -> Any:
    with server.client() as client:
        return client.post(path, json=body)


def ask(server: ChatServer, app_id: str) -> Any:
    body = {"appId": app_id, "messages": [{"role": "user", "content": "hello"}]}
    return post(server, "/api/v1/chat/completions", body).json()


def test_broken_workflow_saves_with_problems_is_refused_at_publish_and_publishes_once_fixed(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    app_id = chat_server.create_app({"name": "Checked", "type": "advanced", **FIXED})

    saved = post(chat_server, "/api/core/app/update", {"appId": app_id, **BROKEN})
    assert saved.status_code == 200, saved.text
    assert [(p["nodeId"], p["field"], p["level"]) for p in saved.json()["data"]["problems"]] == [
        ("aiChat", "", "error"),
        ("aiChat", "userChatInput", "error"),
    ]

    refused = post(chat_server, "/api/core/app/version/publish", {"appId": app_id, **BROKEN})
    assert refused.status_code == 400
    body = refused.json()
    assert body["code"] == 400 and body["statusText"] == "workflowCheckFailed"
    assert body["message"].startswith("Workflow check failed: 2 problems to fix before publishing: ")
    assert "node 'AI chat' (aiChat): not connected" in body["message"]
    assert "userChatInput: User question is required and not set" in body["message"]
    problems = body["data"]["problems"]
    assert {p["field"] for p in problems} == {"", "userChatInput"}
    assert all(p["nodeId"] == "aiChat" and p["problem"] for p in problems)
    with chat_server.client() as client:
        versions = client.post("/api/core/app/version/list", json={"appId": app_id}).json()["data"]
    assert versions["total"] == 1  # nothing published: the first (sound) version still answers

    scripted.set_script([text_turn("still the first version")])
    assert ask(chat_server, app_id)["choices"][0]["message"]["content"] == "still the first version"

    published = post(chat_server, "/api/core/app/version/publish", {"appId": app_id, **FIXED})
    assert published.status_code == 200, published.text
    assert published.json()["data"]["problems"] == []
    scripted.set_script([text_turn("fixed and answering")])
    assert ask(chat_server, app_id)["choices"][0]["message"]["content"] == "fixed and answering"


def test_publish_in_chinese_keeps_code_and_status_text(chat_server: ChatServer) -> None:
    app_id = chat_server.create_app({"name": "Checked zh", "type": "advanced", **FIXED})
    post(chat_server, "/api/core/app/update", {"appId": app_id, **BROKEN})
    with chat_server.client() as client:
        reply = client.post(
            "/api/core/app/version/publish", json={"appId": app_id}, headers={"Accept-Language": "zh-CN"}
        )
    assert reply.status_code == 400
    assert reply.json()["statusText"] == "workflowCheckFailed"
    assert reply.json()["message"].startswith("工作流检查未通过: ")


def test_create_and_import_refuse_a_broken_workflow_and_store_nothing(chat_server: ChatServer) -> None:
    with chat_server.client() as client:
        before = len(client.post("/api/core/app/list", json={}).json()["data"])
    for path in ("/api/core/app/create", "/api/core/app/importWorkflow"):
        reply = post(chat_server, path, {"name": "Broken import", "type": "advanced", **BROKEN})
        assert reply.status_code == 400, reply.text
        assert reply.json()["statusText"] == "workflowCheckFailed"
        assert [p["field"] for p in reply.json()["data"]["problems"]] == ["", "userChatInput"]
    with chat_server.client() as client:
        assert len(client.post("/api/core/app/list", json={}).json()["data"]) == before


def test_warnings_alone_do_not_block_publishing(chat_server: ChatServer) -> None:
    fallback = {**FIXED, "nodes": [start(), ai_chat(["workflowStartNodeId", "userChatInput"])]}
    fallback["nodes"][1]["inputs"][0]["value"] = "gpt-4o-mini"  # not configured here: the default runs
    app_id = chat_server.create_app({"name": "Fallback", "type": "advanced", **fallback})
    published = post(chat_server, "/api/core/app/version/publish", {"appId": app_id})
    assert published.status_code == 200
    [warning] = published.json()["data"]["problems"]
    assert warning["level"] == "warning" and warning["field"] == "model"
    assert f"runs use the default chat model '{MODEL}'" in warning["problem"]
