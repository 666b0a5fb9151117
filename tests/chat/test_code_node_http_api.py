"""The code node's ``http_request`` / ``httpRequest`` helper in the server goes through the egress guard:
a published workflow app run over ``/api/v1/chat/completions`` on a live loopback server reaches an
allowed loopback echo server (127.0.0.1 is allowed in this suite's settings) and is refused a loopback
address that is not allowed (127.0.0.2, where a canary listens and must see no connection) and the
cloud metadata address."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from chat_support import ChatServer

from fathom.sandbox import detect_isolation
from loopback_servers import QuietHandler, serve_on_loopback
from workflow_json import edge, field, typed_answer, typed_start

pytestmark = pytest.mark.skipif(
    not detect_isolation().available, reason="the code sandbox needs OS isolation (root, unshare)"
)


class _Echo(QuietHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        length = int(self.headers.get("Content-Length") or 0)
        echoed = {
            "method": self.command,
            "path": self.path,
            "type": self.headers.get("Content-Type"),
            "body": json.loads(self.rfile.read(length) or b"null"),
        }
        self.send_body(201, json.dumps(echoed).encode(), "application/json")


@pytest.fixture(scope="module")
def echo() -> Iterator[str]:
    with serve_on_loopback(_Echo) as url:
        yield url


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


def _app(code: str, code_type: str, variables: dict[str, str]) -> dict[str, Any]:
    start = typed_start()
    dynamic = {"renderTypeList": ["addInputParam"], "valueType": "dynamic"}
    code_node = {
        "nodeId": "code",
        "name": "code",
        "flowNodeType": "code",
        "inputs": [
            field("system_addInputParam", {}, **dynamic),
            field("codeType", code_type),
            field("code", code),
            *(field(key, value, canEdit=True) for key, value in variables.items()),
        ],
        "outputs": [
            {"id": key, "key": key, "valueType": "any", "type": "static"}
            for key in ("system_rawResponse", "status", "echo", "refused")
        ],
    }
    answer = typed_answer("{{$code.system_rawResponse$}}")
    return {
        "nodes": [start, code_node, answer],
        "edges": [edge("start", "code"), edge("code", "answer")],
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
