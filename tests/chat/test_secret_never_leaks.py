"""A planted secret (an HTTP node's Bearer header secret) is used by a full run, yet never appears in a
response, a stored record, the database file or any log line."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from chat_support import ChatServer

PLANTED = "s3cr3t-planted-6d1f0c"


class _Recorder(BaseHTTPRequestHandler):
    seen: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        _Recorder.seen.append(self.headers.get("Authorization", ""))
        body = json.dumps({"status": "ok"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        return


@pytest.fixture
def internal_api() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/status"
    server.shutdown()


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


def _field(key: str, value: Any, value_type: str = "string") -> dict[str, Any]:
    return {"key": key, "value": value, "valueType": value_type, "renderTypeList": ["input"], "label": key}


def _workflow(url: str) -> dict[str, Any]:
    return {
        "nodes": [
            {
                "nodeId": "start",
                "name": "start",
                "flowNodeType": "workflowStart",
                "inputs": [_field("userChatInput", "")],
                "outputs": [
                    {"id": "userChatInput", "key": "userChatInput", "valueType": "string", "type": "static"}
                ],
            },
            {
                "nodeId": "http",
                "name": "HTTP",
                "flowNodeType": "httpRequest468",
                "inputs": [
                    _field("system_httpMethod", "GET"),
                    _field("system_httpReqUrl", url),
                    _field("system_header_secret", {"Bearer": {"secret": "", "value": PLANTED}}, "object"),
                    _field("system_httpHeader", [], "any"),
                    _field("system_httpParams", [], "any"),
                    _field("system_httpJsonBody", "", "any"),
                ],
                "outputs": [
                    {"id": "httpRawResponse", "key": "httpRawResponse", "valueType": "any", "type": "static"},
                    {"id": "error", "key": "error", "valueType": "object", "type": "static"},
                ],
            },
            {
                "nodeId": "answer",
                "name": "answer",
                "flowNodeType": "answerNode",
                "inputs": [_field("text", "internal API says {{$http.httpRawResponse$}}")],
                "outputs": [],
            },
        ],
        "edges": [
            {
                "source": "start",
                "sourceHandle": "start-source-right",
                "target": "http",
                "targetHandle": "http-target-left",
            },
            {
                "source": "http",
                "sourceHandle": "http-source-right",
                "target": "answer",
                "targetHandle": "answer-target-left",
            },
        ],
        "chatConfig": {},
    }


def test_a_planted_secret_is_used_but_never_leaks(chat_server: ChatServer, internal_api: str) -> None:
    collector = _Collect()
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(collector)
    root.setLevel(logging.DEBUG)
    seen: list[str] = []
    try:
        with chat_server.client() as client:
            created = client.post(
                "/api/core/app/importWorkflow",
                json={"name": "secret-user", "type": "advanced", **_workflow(internal_api)},
            ).json()
            assert created["code"] == 200, created
            app_id = created["data"]
            assert client.post("/api/core/app/version/publish", json={"appId": app_id}).json()["code"] == 200
            request = {
                "appId": app_id,
                "chatId": "leak-check",
                "messages": [{"role": "user", "content": "go"}],
            }
            seen.append(client.post("/api/v1/chat/completions", json={**request, "detail": True}).text)
            seen.append(
                client.post("/api/v1/chat/completions", json={**request, "stream": True, "detail": True}).text
            )
            for path, body in [
                ("/api/core/app/detail", {"appId": app_id}),
                ("/api/core/app/exportWorkflow", {"appId": app_id}),
                ("/api/core/app/version/list", {"appId": app_id}),
                (
                    "/api/core/chat/getPaginationRecords",
                    {"appId": app_id, "chatId": "leak-check", "pageSize": 30},
                ),
            ]:
                seen.append(client.post(path, json=body).text)
    finally:
        root.removeHandler(collector)
        root.setLevel(old_level)
    assert _Recorder.seen and all(h == f"Bearer {PLANTED}" for h in _Recorder.seen)  # it was really used
    assert "internal API says" in seen[0] and "ok" in seen[0]
    for text in seen:
        assert PLANTED not in text
    assert not [line for line in collector.lines if PLANTED in line]
    database = chat_server.platform.settings.data_dir / "fathom.db"
    for path in [database, *database.parent.glob("fathom.db-wal")] if database.exists() else []:
        assert PLANTED.encode() not in path.read_bytes()  # the SQLite file (absent on PostgreSQL)
