"""A workflow app calling another app of the team (``appModule``) through the chat API: the child's
published version runs, its pause becomes the parent's, and the next request resumes inside it."""

from __future__ import annotations

from typing import Any

from chat_support import ChatServer

from workflow_json import edge


def _node(
    node_id: str, kind: str, inputs: list[dict[str, Any]], outputs: list[str] = (), **extra: Any
) -> dict[str, Any]:
    return {
        "nodeId": node_id,
        "name": node_id,
        "flowNodeType": kind,
        "inputs": inputs,
        "outputs": [{"id": key, "key": key, "valueType": "any"} for key in outputs],
        **extra,
    }


def _in(key: str, value: Any, value_type: str = "any") -> dict[str, Any]:
    return {"key": key, "value": value, "valueType": value_type}


START = _node("start", "workflowStart", [], ["userChatInput"])


def child_workflow() -> dict[str, Any]:
    select = _node(
        "pick",
        "userSelect",
        [
            _in("description", "Which size?"),
            _in("userSelectOptions", [{"key": "s", "value": "Small"}, {"key": "l", "value": "Large"}]),
        ],
        ["selectResult"],
    )
    done = _node("done", "answerNode", [_in("text", "child chose {{$pick.selectResult$}}")])
    return {
        "nodes": [START, select, done],
        "edges": [edge("start", "pick"), edge("pick", "done", "l"), edge("pick", "done", "s")],
        "chatConfig": {},
    }


def parent_workflow(child_id: str) -> dict[str, Any]:
    run_child = _node(
        "child",
        "appModule",
        [_in("userChatInput", ["start", "userChatInput"], "string"), _in("history", 0, "chatHistory")],
        ["answerText", "history"],
        pluginId=child_id,
    )
    after = _node("after", "answerNode", [_in("text", "parent saw: {{$child.answerText$}}")])
    return {
        "nodes": [START, run_child, after],
        "edges": [edge("start", "child"), edge("child", "after")],
        "chatConfig": {},
    }


def test_child_app_pause_and_resume_through_the_api(chat_server: ChatServer) -> None:
    child = chat_server.create_app({"name": "Sizer", "type": "advanced", **child_workflow()})
    parent = chat_server.create_app({"name": "Shop", "type": "advanced", **parent_workflow(child)})
    with chat_server.client() as client:
        body = {
            "appId": parent,
            "chatId": "shop",
            "detail": True,
            "messages": [{"role": "user", "content": "buy"}],
        }
        paused = client.post("/api/v1/chat/completions", json=body).json()
        assert paused["interactive"]["type"] == "childrenInteractive"
        inner = paused["interactive"]["params"]["childrenResponse"]
        assert inner["type"] == "userSelect" and inner["params"]["description"] == "Which size?"
        body["messages"] = [{"role": "user", "content": "Large"}]
        done = client.post("/api/v1/chat/completions", json={**body, "detail": False}).json()
    assert done["choices"][0]["message"]["content"].endswith("parent saw: \nchild chose Large")


def test_unpublished_child_app_is_a_node_error(chat_server: ChatServer) -> None:
    child = chat_server.create_app(
        {"name": "Never published", "type": "advanced", **child_workflow()}, publish=False
    )
    parent = chat_server.create_app({"name": "Orphan", "type": "advanced", **parent_workflow(child)})
    with chat_server.client() as client:
        body = {"appId": parent, "detail": True, "messages": [{"role": "user", "content": "x"}]}
        reply = client.post("/api/v1/chat/completions", json=body).json()
    assert "has no published version" in reply["error"]
