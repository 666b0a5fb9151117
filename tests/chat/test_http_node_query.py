"""The HTTP node keeps the URL's own query string and appends its params after it (FastGPT's axios order),
checked through a published workflow app over the chat API against a loopback echo server."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from chat_support import ChatServer


class _Echo(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        body = json.dumps({"target": self.path}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        return


@pytest.fixture(scope="module")
def echo() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def _field(key: str, value: Any, value_type: str = "string") -> dict[str, Any]:
    return {"key": key, "value": value, "valueType": value_type, "renderTypeList": ["input"], "label": key}


def _edge(source: str, target: str) -> dict[str, Any]:
    return {
        "source": source,
        "sourceHandle": f"{source}-source-right",
        "target": target,
        "targetHandle": f"{target}-target-left",
    }


def _app(url: str, params: list[dict[str, str]]) -> dict[str, Any]:
    start = {
        "nodeId": "start",
        "name": "start",
        "flowNodeType": "workflowStart",
        "inputs": [_field("userChatInput", "")],
        "outputs": [{"id": "userChatInput", "key": "userChatInput", "valueType": "string", "type": "static"}],
    }
    http = {
        "nodeId": "http",
        "name": "HTTP",
        "flowNodeType": "httpRequest468",
        "inputs": [
            _field("system_httpMethod", "GET"),
            _field("system_httpReqUrl", url),
            _field("system_httpHeader", [], "any"),
            _field("system_httpParams", params, "any"),
            _field("system_httpJsonBody", "", "any"),
        ],
        "outputs": [
            {"id": "target", "key": "target", "valueType": "string", "type": "static"},
            {"id": "error", "key": "error", "valueType": "object", "type": "static"},
        ],
    }
    answer = {
        "nodeId": "answer",
        "name": "answer",
        "flowNodeType": "answerNode",
        "inputs": [_field("text", "<{{$http.target$}}>")],
        "outputs": [],
    }
    return {
        "nodes": [start, http, answer],
        "edges": [_edge("start", "http"), _edge("http", "answer")],
        "chatConfig": {},
    }


@pytest.mark.parametrize(
    ("path", "params", "arrives_as"),
    [
        ("/echo?x=1&y=2", [], "/echo?x=1&y=2"),
        ("/echo?x=1&y=2", [{"key": "page", "value": "3"}], "/echo?x=1&y=2&page=3"),
        ("/echo", [{"key": "q", "value": "a b&c"}], "/echo?q=a+b%26c"),
        ("/echo?x=1#part", [{"key": "x", "value": "2"}], "/echo?x=1&x=2"),
    ],
)
def test_the_url_query_is_kept_and_params_follow_it(
    chat_server: ChatServer, echo: str, path: str, params: list[dict[str, str]], arrives_as: str
) -> None:
    app_id = chat_server.create_app({"name": "query", "type": "advanced", **_app(echo + path, params)})
    with chat_server.client() as client:
        answer = client.post(
            "/api/v1/chat/completions",
            json={
                "appId": app_id,
                "chatId": f"q{abs(hash(path + str(params)))}",
                "messages": [{"role": "user", "content": "go"}],
            },
        ).json()
    assert answer["choices"][0]["message"]["content"].strip() == f"<{arrives_as}>"
