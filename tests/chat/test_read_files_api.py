"""The readFiles node in a published app: the file is downloaded through the egress guard and parsed."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from chat_support import ChatServer

MARKDOWN = b"# Travel policy\n\nBusiness class is allowed on flights longer than six hours.\n"


class _Files(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self.send_response(200)
        self.send_header("Content-Type", "text/markdown")
        self.send_header("Content-Length", str(len(MARKDOWN)))
        self.end_headers()
        self.wfile.write(MARKDOWN)

    def log_message(self, *args: Any) -> None:
        return


@pytest.fixture
def file_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Files)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/docs/policy.md"
    server.shutdown()


def _field(key: str, value: Any, value_type: str = "string") -> dict[str, Any]:
    return {"key": key, "value": value, "valueType": value_type, "renderTypeList": ["input"], "label": key}


def _out(key: str, value_type: str = "string") -> dict[str, Any]:
    return {"id": key, "key": key, "valueType": value_type, "type": "static", "label": key}


def test_read_files_node_reads_a_document_through_the_guard(chat_server: ChatServer, file_url: str) -> None:
    graph = {
        "nodes": [
            {
                "nodeId": "start",
                "name": "start",
                "flowNodeType": "workflowStart",
                "inputs": [_field("userChatInput", "")],
                "outputs": [_out("userChatInput")],
            },
            {
                "nodeId": "read",
                "name": "read",
                "flowNodeType": "readFiles",
                "inputs": [_field("fileUrlList", [file_url], "arrayString")],
                "outputs": [_out("system_text")],
            },
            {
                "nodeId": "answer",
                "name": "answer",
                "flowNodeType": "answerNode",
                "inputs": [_field("text", "{{$read.system_text$}}")],
                "outputs": [],
            },
        ],
        "edges": [
            {
                "source": "start",
                "sourceHandle": "start-source-right",
                "target": "read",
                "targetHandle": "read-target-left",
            },
            {
                "source": "read",
                "sourceHandle": "read-source-right",
                "target": "answer",
                "targetHandle": "answer-target-left",
            },
        ],
        "chatConfig": {},
    }
    with chat_server.client() as client:
        app_id = client.post("/api/core/app/importWorkflow", json={"name": "reader", **graph}).json()["data"]
        assert client.post("/api/core/app/version/publish", json={"appId": app_id}).json()["code"] == 200
        reply = client.post(
            "/api/v1/chat/completions",
            json={"appId": app_id, "messages": [{"role": "user", "content": "read"}]},
        ).json()
    content = reply["choices"][0]["message"]["content"]
    assert "File: policy.md" in content and "Business class is allowed" in content
