"""FastGPT's system tools (``pluginModule`` nodes with ``pluginId: "community-…"``) run in a workflow app
through the HTTP API: time, math, delay, text editing, and the WeCom/DingTalk/Feishu webhook senders
(through the egress guard, to a loopback receiver); an id Fathom lacks fails its node by name."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from chat_support import ChatServer


@pytest.fixture(scope="module")
def receiver() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    received: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            return

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            url = urlparse(self.path)
            received.append({"path": url.path, "query": parse_qs(url.query), "json": json.loads(body)})
            payload = b'{"errcode":0,"errmsg":"ok"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()


def tool(node_id: str, plugin_id: str, inputs: dict[str, Any], outputs: list[str]) -> dict[str, Any]:
    return {
        "nodeId": node_id,
        "name": node_id,
        "flowNodeType": "pluginModule",
        "pluginId": plugin_id,
        "inputs": [{"key": "system_forbid_stream", "value": True, "valueType": "boolean"}]
        + [
            {"key": k, "value": v, "valueType": "string", "renderTypeList": ["input"]}
            for k, v in inputs.items()
        ],
        "outputs": [{"id": key, "key": key, "valueType": "any", "type": "static"} for key in outputs],
    }


def chain(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    ids = ["start"] + [n["nodeId"] for n in nodes]
    return [
        {"source": a, "target": b, "sourceHandle": f"{a}-source-right", "targetHandle": f"{b}-target-left"}
        for a, b in zip(ids, ids[1:], strict=False)
    ]


def run_app(server: ChatServer, nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    start = {
        "nodeId": "start",
        "name": "start",
        "flowNodeType": "workflowStart",
        "inputs": [{"key": "userChatInput", "value": "", "valueType": "string"}],
        "outputs": [{"id": "userChatInput", "key": "userChatInput", "valueType": "string", "type": "static"}],
    }
    app_id = server.create_app(
        {"name": "Tools", "type": "advanced", "nodes": [start, *nodes], "edges": chain(nodes)}
    )
    with server.client() as client:
        body = {"appId": app_id, "detail": True, "messages": [{"role": "user", "content": "go"}]}
        reply = client.post("/api/v1/chat/completions", json=body).json()
    return list(reply["responseData"])


def test_local_system_tools_run_with_fastgpt_ids(chat_server: ChatServer) -> None:
    nodes = [
        tool("time", "community-getTime", {}, ["time"]),
        tool("math", "community-mathExprVal", {"数学表达式": "(2 + 3) * 4 ^ 2 / 8"}, ["result"]),
        tool("wait", "community-delay", {"ms": "1"}, ["result"]),
        tool(
            "edit",
            "community-textEditor",
            {"文本": "{{who}} has {{n}}", "who": "Ann", "n": "{{$math.result$}}"},
            ["text"],
        ),
    ]
    responses = run_app(chat_server, nodes)
    assert [r["moduleType"] for r in responses] == ["workflowStart", *["pluginModule"] * 4]
    by_id = {r["nodeId"]: r for r in responses}
    assert len(by_id["time"]["pluginOutput"]["time"]) == len("2026-01-01 00:00:00")
    assert by_id["math"]["pluginOutput"] == {"result": 10}
    assert by_id["wait"]["pluginOutput"] == {"result": 1}
    assert by_id["edit"]["pluginOutput"] == {"text": "Ann has 10"}


def test_webhook_senders_post_fastgpt_bodies_through_the_egress_guard(
    chat_server: ChatServer, receiver: tuple[str, list[dict[str, Any]]]
) -> None:
    base, received = receiver
    received.clear()
    nodes = [
        tool(
            "wecom",
            "community-WeWorkWebhook",
            {"企微机器人地址": f"{base}/wecom", "发送的消息": "hi wecom"},
            ["result"],
        ),
        tool(
            "ding",
            "community-DingTalkWebhook",
            {"钉钉机器人地址": f"{base}/ding?access_token=t", "加签值": "SEC1", "发送的消息": "hi ding"},
            ["result"],
        ),
        tool(
            "feishu", "community-feishu", {"hook_url": f"{base}/feishu", "content": "hi feishu"}, ["result"]
        ),
    ]
    responses = run_app(chat_server, nodes)
    assert not any(r.get("error") for r in responses), responses
    by_path = {r["path"]: r for r in received}
    assert by_path["/wecom"]["json"] == {"msgtype": "text", "text": {"content": "hi wecom"}}
    assert by_path["/ding"]["json"] == {"msgtype": "text", "text": {"content": "hi ding"}}
    assert set(by_path["/ding"]["query"]) == {"access_token", "timestamp", "sign"}
    assert by_path["/feishu"]["json"] == {"msg_type": "text", "content": {"text": "hi feishu"}}
    assert responses[-1]["pluginOutput"] == {"result": {"errcode": 0, "errmsg": "ok"}}


def test_webhook_to_a_private_address_is_refused_by_the_egress_guard(chat_server: ChatServer) -> None:
    nodes = [
        tool("feishu", "community-feishu", {"hook_url": "http://10.0.0.1/hook", "content": "x"}, ["result"])
    ]
    responses = run_app(chat_server, nodes)
    assert responses[-1]["error"] and "10.0.0.1" in responses[-1]["error"]


def test_unknown_system_tool_fails_its_node_by_name_and_the_api_lists_the_available_ones(
    chat_server: ChatServer,
) -> None:
    responses = run_app(chat_server, [tool("x", "community-bocha", {"query": "q"}, ["result"])])
    assert "community-bocha" in responses[-1]["error"] and "community-getTime" in responses[-1]["error"]
    with chat_server.client() as client:
        listed = client.get("/api/core/app/plugin/getSystemPluginTemplates").json()["data"]
    assert {item["pluginId"] for item in listed} >= {
        "community-getTime",
        "community-mathExprVal",
        "community-delay",
        "community-textEditor",
        "community-WeWorkWebhook",
        "community-DingTalkWebhook",
        "community-feishu",
    }


def test_a_webhook_sender_without_an_address_is_refused_by_authorize_before_anything_is_sent(
    chat_server: ChatServer, receiver: tuple[str, list[dict[str, Any]]]
) -> None:
    _, received = receiver
    received.clear()
    nodes = [tool("wecom", "community-WeWorkWebhook", {"企微机器人地址": "", "发送的消息": "hi"}, ["result"])]
    responses = run_app(chat_server, nodes)
    assert responses[-1]["error"] == "The webhook address is empty"
    assert received == []
