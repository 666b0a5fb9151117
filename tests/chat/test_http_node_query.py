"""The HTTP node keeps the URL's own query string and appends its params after it (FastGPT's axios order),
checked through a published workflow app over the chat API against a loopback echo server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from chat_support import ChatServer

from loopback_servers import QuietHandler, serve_on_loopback
from workflow_json import edge, field, typed_answer, typed_start


class _Echo(QuietHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self.send_body(200, json.dumps({"target": self.path}).encode(), "application/json")


@pytest.fixture(scope="module")
def echo() -> Iterator[str]:
    with serve_on_loopback(_Echo) as url:
        yield url


def _app(url: str, params: list[dict[str, str]]) -> dict[str, Any]:
    start = typed_start()
    http = {
        "nodeId": "http",
        "name": "HTTP",
        "flowNodeType": "httpRequest468",
        "inputs": [
            field("system_httpMethod", "GET"),
            field("system_httpReqUrl", url),
            field("system_httpHeader", [], "any"),
            field("system_httpParams", params, "any"),
            field("system_httpJsonBody", "", "any"),
        ],
        "outputs": [
            {"id": "target", "key": "target", "valueType": "string", "type": "static"},
            {"id": "error", "key": "error", "valueType": "object", "type": "static"},
        ],
    }
    answer = typed_answer("<{{$http.target$}}>")
    return {
        "nodes": [start, http, answer],
        "edges": [edge("start", "http"), edge("http", "answer")],
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
