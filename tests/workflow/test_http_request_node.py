"""The HTTP node against a real loopback server through a plain ``httpx.AsyncClient``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from wf_builders import answer, edge, node_input, output, start, workflow
from wf_http_server import loopback_server

from fathom.workflow import WorkflowServices, run_workflow


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with loopback_server() as url:
        yield url


def http_node(
    method: str, url: str, *, body: str = "", outputs: list[str] = (), **extra: Any
) -> dict[str, Any]:
    return {
        "nodeId": "http",
        "name": "HTTP",
        "flowNodeType": "httpRequest468",
        "version": "481",
        "inputs": [
            node_input("system_addInputParam", {}, "dynamic", render="addInputParam"),
            node_input("system_httpMethod", method),
            node_input("system_httpReqUrl", url),
            node_input(
                "system_httpHeader", [{"key": "X-Token", "value": "tok-{{name}}", "type": "string"}], "any"
            ),
            node_input("system_httpParams", [{"key": "page", "value": "{{count}}", "type": "string"}], "any"),
            node_input("system_httpJsonBody", body, "any"),
            node_input("system_httpContentType", "json"),
            node_input("city", "Paris", "string", canEdit=True),
        ],
        "outputs": [output("httpRawResponse", "any"), output("error", "object")]
        + [output(key, "any") for key in outputs],
        **extra,
    }


BODY = (
    '{"name": "{{name}}", "count": {{count}}, "question": "{{$start.userChatInput$}}", '
    '"city": "{{city}}", "tags": {{tags}}, "missing": {{nothing}}, "quotedMissing": "{{nothing}}", '
    '"tagsText": "{{tags}}"}'
)


async def run(graph: dict[str, Any], client: httpx.AsyncClient | None, query: str = "q") -> Any:
    return await run_workflow(
        graph,
        query=query,
        services=WorkflowServices(http_client=client),
        variables={"name": "Ann", "count": 2, "tags": ["x", "y"]},
    )


async def test_json_body_headers_and_params_are_templated(base_url: str) -> None:
    graph = workflow(
        [
            start(),
            http_node(
                "POST",
                base_url + "/echo",
                body=BODY,
                outputs=["json.name", "$.json.tags[*]", "$.headers.x-token", "query.page", "json.question"],
            ),
        ],
        [edge("start", "http")],
    )
    async with httpx.AsyncClient() as client:
        result = await run(graph, client, query='say "hi"\nnow')
    outputs = result.node_outputs["http"]
    raw = outputs["httpRawResponse"]
    assert raw["method"] == "POST"
    assert raw["json"] == {
        "name": "Ann",
        "count": 2,
        "question": 'say "hi"\nnow',
        "city": "Paris",
        "tags": ["x", "y"],
        "missing": None,  # unresolved: null as a JSON value, nothing inside a string (FastGPT valToStr)
        "quotedMissing": "",
        "tagsText": '["x","y"]',
    }
    assert raw["headers"]["content-type"] == "application/json"
    assert outputs["json.name"] == "Ann"
    assert outputs["$.json.tags[*]"] == ["x", "y"]
    assert outputs["$.headers.x-token"] == "tok-Ann"
    assert outputs["query.page"] == "2"
    assert outputs["json.question"] == 'say "hi"\nnow'
    response = result.flow_responses[-1]
    assert response["moduleType"] == "httpRequest468" and response["params"] == {"page": "2"}


async def test_get_sends_no_body(base_url: str) -> None:
    graph = workflow([start(), http_node("GET", base_url + "/echo", body=BODY)], [edge("start", "http")])
    async with httpx.AsyncClient() as client:
        result = await run(graph, client)
    raw = result.node_outputs["http"]["httpRawResponse"]
    assert raw["method"] == "GET" and raw["body"] == ""


async def test_server_error_without_catch_error_sets_error_output_and_continues(base_url: str) -> None:
    graph = workflow(
        [
            start(),
            http_node("GET", base_url + "/status/503"),
            answer("next", "after {{$http.httpRawResponse$}}"),
        ],
        [edge("start", "http"), edge("http", "next")],
    )
    async with httpx.AsyncClient() as client:
        result = await run(graph, client)
    assert result.node_outputs["http"]["error"]["status"] == 503
    assert result.answer_text == "\nafter Request failed with status code 503"


@pytest.mark.parametrize(
    ("url", "with_client", "message"),
    [
        ("", True, "Http url is empty"),
        ("http://127.0.0.1:9/x", False, "The HTTP request node needs an outbound HTTP client"),
    ],
)
async def test_unusable_request_is_a_node_error(url: str, with_client: bool, message: str) -> None:
    graph = workflow(
        [start(), http_node("GET", url), answer("next", "never")],
        [edge("start", "http"), edge("http", "next")],
    )
    async with httpx.AsyncClient() as client:
        result = await run(graph, client if with_client else None)
    assert result.error == message
    assert result.skipped_node_ids == ["next"]
