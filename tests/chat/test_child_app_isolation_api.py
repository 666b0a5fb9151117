"""Child apps (``appModule``) through the chat API: the child sees only the files selected for it under
the parent's quota (current input first, then history newest first), the history the node passes on
is the filtered one, the running member needs read permission on the child, and the child's tokens
roll up to the parent's usage."""

from __future__ import annotations

import json
from typing import Any

from chat_support import ChatServer, simple_app_body

from fathom.platform import Platform
from fathom.testing import ScriptedOpenAIServer, text_turn
from workflow_json import START, answer, edge


def file_lister() -> dict[str, Any]:
    return {
        "nodes": [START, answer("say", "FILES={{$start.userFiles$}}")],
        "edges": [edge("start", "say")],
        "chatConfig": {},
    }


def parent(child_id: str, *, max_files: int, tail: str = "") -> dict[str, Any]:
    run_child = {
        "nodeId": "child",
        "name": "child",
        "flowNodeType": "appModule",
        "pluginId": child_id,
        "inputs": [
            {"key": "userChatInput", "value": ["start", "userChatInput"], "valueType": "string"},
            {"key": "history", "value": 6, "valueType": "chatHistory"},
        ],
        "outputs": [
            {"id": "answerText", "key": "answerText", "valueType": "string"},
            {"id": "history", "key": "history", "valueType": "chatHistory"},
        ],
    }
    nodes = [START, run_child]
    edges = [edge("start", "child")]
    if tail:
        nodes.append(answer("after", tail))
        edges.append(edge("child", "after"))
    config = {"fileSelectConfig": {"canSelectFile": True, "maxFiles": max_files}}
    return {"nodes": nodes, "edges": edges, "chatConfig": config}


def _files(*names: str) -> list[dict[str, Any]]:
    return [{"type": "file_url", "name": n, "url": f"https://files.example/{n}"} for n in names]


def _say(chat_server: ChatServer, app_id: str, chat_id: str, text: str, *files: str) -> dict[str, Any]:
    content = [{"type": "text", "text": text}, *_files(*files)]
    body = {
        "appId": app_id,
        "chatId": chat_id,
        "detail": True,
        "messages": [{"role": "user", "content": content}],
    }
    with chat_server.client() as client:
        reply: dict[str, Any] = client.post("/api/v1/chat/completions", json=body).json()
    return reply


def _text(reply: dict[str, Any]) -> str:
    content = reply["choices"][0]["message"]["content"]
    if isinstance(content, str):
        return content
    return "".join(v["text"]["content"] for v in content if v["type"] == "text")


def _child_files(reply: dict[str, Any]) -> list[str]:
    marker = next(t for t in _text(reply).split("\n") if t.startswith("FILES="))
    return [url.rsplit("/", 1)[-1] for url in json.loads(marker.removeprefix("FILES="))]


def _passed_history(reply: dict[str, Any]) -> list[list[str]]:
    """The file names of each Human item in the ``history`` output of the child node."""
    marker = next(t for t in _text(reply).split("\n") if t.startswith("HISTORY="))
    history = json.loads(marker.removeprefix("HISTORY="))
    return [
        [v["file"]["url"].rsplit("/", 1)[-1] for v in item["value"] if v.get("type") == "file"]
        for item in history
        if item["obj"] == "Human"
    ]


def test_child_sees_files_under_the_parents_quota_current_input_first_then_newest_history(
    chat_server: ChatServer,
) -> None:
    child = chat_server.create_app({"name": "Lister", "type": "advanced", **file_lister()})
    workflow = parent(child, max_files=2, tail="HISTORY={{$child.history$}}")
    app_id = chat_server.create_app({"name": "Desk", "type": "advanced", **workflow})

    first = _say(chat_server, app_id, "desk", "one", "a.pdf")
    assert _child_files(first) == ["a.pdf"]

    second = _say(chat_server, app_id, "desk", "two", "b.pdf", "c.pdf", "d.pdf")
    assert _child_files(second) == ["b.pdf", "c.pdf"]  # the quota: 2 of the 3 new files
    assert _passed_history(second) == [[], ["b.pdf", "c.pdf"]]  # a.pdf lost to the current input

    third = _say(chat_server, app_id, "desk", "three", "e.pdf")
    assert _child_files(third) == ["e.pdf"]
    # the current file, then the newest history file (d.pdf); older ones are removed from the history
    assert _passed_history(third) == [[], ["d.pdf"], ["e.pdf"]]


def test_running_member_needs_read_permission_on_the_child(chat_server: ChatServer) -> None:
    child = chat_server.create_app({"name": "Secret lister", "type": "advanced", **file_lister()})
    app_id = chat_server.create_app({"name": "Shared desk", "type": "advanced", **parent(child, max_files=5)})
    team = chat_server.boot.team_id

    async def reader_key(platform: Platform) -> tuple[str, str]:
        reader = await platform.teams.add_member(team, "desk reader", "member")
        await platform.teams.set_permission(reader.id, "app", app_id, "read")
        _, key = await platform.api_keys.create_key(team, reader.id)
        return reader.id, key

    reader_id, key = chat_server.run(reader_key)
    body = {"appId": app_id, "detail": True, "messages": [{"role": "user", "content": "hi"}]}
    with chat_server.client(key) as client:
        refused = client.post("/api/v1/chat/completions", json=body).json()
    node = next(r for r in refused["responseData"] if r["moduleType"] == "appModule")
    assert node["error"].startswith("No read permission on app Secret lister")

    async def grant(platform: Platform) -> None:
        await platform.teams.set_permission(reader_id, "app", child, "read")

    chat_server.run(grant)
    with chat_server.client(key) as client:
        allowed = client.post("/api/v1/chat/completions", json=body).json()
    node = next(r for r in allowed["responseData"] if r["moduleType"] == "appModule")
    assert "error" not in node


def test_the_parent_apps_owner_needs_read_permission_on_the_child(chat_server: ChatServer) -> None:
    """A member who may not read the child builds the parent: the team owner's chat with the parent runs
    no child, because the parent's owner may not read it (checked at run time)."""
    child = chat_server.create_app({"name": "Payroll lister", "type": "advanced", **file_lister()})
    team = chat_server.boot.team_id

    async def member_key(platform: Platform) -> tuple[str, str]:
        member = await platform.teams.add_member(team, "parent builder", "member")
        _, key = await platform.api_keys.create_key(team, member.id)
        return member.id, key

    builder_id, builder_key = chat_server.run(member_key)
    app_id = chat_server.create_app(
        {"name": "Builder's desk", "type": "advanced", **parent(child, max_files=5)}, key=builder_key
    )
    body = {"appId": app_id, "detail": True, "messages": [{"role": "user", "content": "hi"}]}
    with chat_server.client() as client:
        refused = client.post("/api/v1/chat/completions", json=body).json()
    node = next(r for r in refused["responseData"] if r["moduleType"] == "appModule")
    assert node["error"].startswith("No read permission on app Payroll lister")
    assert "the app's owner may not read it" in node["error"]

    async def grant(platform: Platform) -> None:
        await platform.teams.set_permission(builder_id, "app", child, "read")

    chat_server.run(grant)
    with chat_server.client() as client:
        allowed = client.post("/api/v1/chat/completions", json=body).json()
    assert "error" not in next(r for r in allowed["responseData"] if r["moduleType"] == "appModule")


def test_child_tokens_roll_up_to_the_parents_usage(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    child = chat_server.create_app(simple_app_body("Talker"))
    app_id = chat_server.create_app({"name": "Relay", "type": "advanced", **parent(child, max_files=5)})
    scripted.clear()
    scripted.set_script([text_turn("Hello from the child.")])
    _say(chat_server, app_id, "relay", "hi")
    sent = scripted.chat_requests[-1]
    assert sent["messages"][-1]["content"] == "hi"
    with chat_server.client() as client:
        summary = client.get("/api/support/usage/summary", params={"appId": app_id}).json()["data"]
    assert summary["total"]["inputTokens"] > 0
    assert summary["total"]["outputTokens"] > 0
