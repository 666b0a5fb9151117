"""The code node's ``http_request`` / ``httpRequest`` helper in the server goes through the egress guard:
a published workflow app run over ``/api/v1/chat/completions`` on a live loopback server reaches an
allowed loopback echo server (127.0.0.1 is allowed in this suite's settings) and is refused a loopback
address that is not allowed (127.0.0.2, where a canary listens and must see no connection) and the
cloud metadata address."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from chat_support import ChatServer

from fathom.sandbox import detect_isolation

pytestmark = pytest.mark.skipif(
    not detect_isolation().available, reason="the code sandbox needs OS isolation (root, unshare)"
)


class _Echo(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        length = int(self.headers.get("Content-Length") or 0)
        echoed = {
            "method": self.command,
            "path": self.path,
            "type": self.headers.get("Content-Type"),
            "body": json.loads(self.rfile.read(length) or b"null"),
        }
        body = json.dumps(echoed).encode()
        self.send_response(201)
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
    server.server_close()


@pytest.fixture(scope="module")
def canary() -> Iterator[tuple[str, list[int]]]:
    """A listener on 127.0.0.2 (loopback, but not in the allowed 127.0.0.1/32): it must stay untouched."""
    listener = socket.socket()
    listener.bind(("127.0.0.2", 0))
    listener.listen()
    listener.setblocking(False)
    connections: list[int] = []
    yield f"http://127.0.0.2:{listener.getsockname()[1]}/secret", connections
    try:
        while True:
            conn, _ = listener.accept()
            connections.append(1)
            conn.close()
    except OSError:
        pass
    listener.close()


PYTHON = """
def main(url, denied, metadata):
    reply = http_request(url + '/echo?x=1', method='POST', body={'n': 1})
    refused = []
    for target in (denied, metadata):
        try:
            http_request(target)
            refused.append('not refused')
        except Exception as error:
            refused.append(str(error))
    return {'status': reply['status'], 'echo': json.loads(reply['data']), 'refused': refused}
"""
JAVASCRIPT = """
async function main({url, denied, metadata}) {
  const reply = await httpRequest(url + '/echo?x=1', {method: 'POST', body: {n: 1}});
  const refused = [];
  for (const target of [denied, metadata]) {
    try { await httpRequest(target); refused.push('not refused'); }
    catch (error) { refused.push(error.message); }
  }
  return {status: reply.status, echo: JSON.parse(reply.data), refused};
}
"""


def _field(key: str, value: Any, value_type: str = "string", **extra: Any) -> dict[str, Any]:
    return {
        "key": key,
        "value": value,
        "valueType": value_type,
        "renderTypeList": ["input"],
        "label": key,
    } | extra


def _edge(source: str, target: str) -> dict[str, Any]:
    return {
        "source": source,
        "sourceHandle": f"{source}-source-right",
        "target": target,
        "targetHandle": f"{target}-target-left",
    }


def _app(code: str, code_type: str, variables: dict[str, str]) -> dict[str, Any]:
    start = {
        "nodeId": "start",
        "name": "start",
        "flowNodeType": "workflowStart",
        "inputs": [_field("userChatInput", "")],
        "outputs": [{"id": "userChatInput", "key": "userChatInput", "valueType": "string", "type": "static"}],
    }
    dynamic = {"renderTypeList": ["addInputParam"], "valueType": "dynamic"}
    code_node = {
        "nodeId": "code",
        "name": "code",
        "flowNodeType": "code",
        "inputs": [
            _field("system_addInputParam", {}, **dynamic),
            _field("codeType", code_type),
            _field("code", code),
            *(_field(key, value, canEdit=True) for key, value in variables.items()),
        ],
        "outputs": [
            {"id": key, "key": key, "valueType": "any", "type": "static"}
            for key in ("system_rawResponse", "status", "echo", "refused")
        ],
    }
    answer = {
        "nodeId": "answer",
        "name": "answer",
        "flowNodeType": "answerNode",
        "inputs": [_field("text", "{{$code.system_rawResponse$}}")],
        "outputs": [],
    }
    return {
        "nodes": [start, code_node, answer],
        "edges": [_edge("start", "code"), _edge("code", "answer")],
        "chatConfig": {},
    }


@pytest.mark.parametrize(
    ("code", "code_type"), [(PYTHON, "py"), (JAVASCRIPT, "js")], ids=["python", "javascript"]
)
def test_code_node_http_request_goes_through_the_egress_guard(
    chat_server: ChatServer, echo: str, canary: tuple[str, list[int]], code: str, code_type: str
) -> None:
    if code_type == "js" and not detect_isolation().node:
        pytest.skip("node is not installed on this machine")
    denied, connections = canary
    metadata = "http://169.254.169.254/latest/meta-data/"
    variables = {"url": echo, "denied": denied, "metadata": metadata}
    app_id = chat_server.create_app(
        {"name": f"code-http-{code_type}", "type": "advanced", **_app(code, code_type, variables)}
    )
    with chat_server.client() as client:
        reply = client.post(
            "/api/v1/chat/completions",
            json={
                "appId": app_id,
                "chatId": f"code-http-{code_type}",
                "messages": [{"role": "user", "content": "go"}],
            },
        ).json()
    returned = json.loads(reply["choices"][0]["message"]["content"])
    assert returned["status"] == 201
    assert returned["echo"] == {
        "method": "POST",
        "path": "/echo?x=1",
        "type": "application/json",
        "body": {"n": 1},
    }
    assert returned["refused"] == [
        "Request to private network not allowed: 127.0.0.2 is a loopback address."
        " To allow it, add 127.0.0.2/32 to FATHOM_EGRESS_ALLOW_CIDRS.",
        "Request to private network not allowed: 169.254.169.254 is a cloud metadata address;"
        " it is never allowed, whatever FATHOM_EGRESS_ALLOW_CIDRS or FATHOM_EGRESS_ALLOW_HOSTS say",
    ]
    assert connections == []
