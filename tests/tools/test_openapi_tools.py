"""HTTP tools from OpenAPI 3 / Swagger 2 documents, against a real loopback server via the egress guard."""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fathom.security.egress import EgressGuard, EgressPolicy
from fathom.tools import ToolInputValidationError, run_tool
from fathom.tools.http_client import ToolHttpClient, create_tool_http_client
from fathom.tools.sources import (
    OpenApiRequestError,
    OpenApiSchemaError,
    OpenApiToolSet,
    build_openapi_request,
    parse_openapi_document,
)


class EchoHandler(BaseHTTPRequestHandler):
    """Answers every request with what it received; ``/status/{code}`` answers that status."""

    def _answer(self) -> None:
        parts = urlsplit(self.path)
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length).decode() if length else None
        if parts.path.startswith("/v1/status/"):
            code = int(parts.path.rsplit("/", 1)[1])
            payload = b"teapot says no"
            self.send_response(code)
            self.send_header("content-type", "text/plain")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            return
        data = {
            "method": self.command,
            "path": parts.path,
            "query": parse_qsl(parts.query, keep_blank_values=True),
            "headers": {k.lower(): v for k, v in self.headers.items()},
            "body": json.loads(body) if body else None,
        }
        raw = json.dumps(data).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _answer

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), EchoHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


@pytest.fixture
async def client() -> AsyncIterator[ToolHttpClient]:
    guard = EgressGuard(EgressPolicy(allow_cidrs=["127.0.0.1/32"]))
    http = create_tool_http_client(guard, timeout=10)
    yield http
    await http.aclose()  # type: ignore[attr-defined]


def openapi3(server_url: str) -> dict[str, Any]:
    return {
        "openapi": "3.0.3",
        "info": {"title": "Echo", "version": "1"},
        "servers": [{"url": server_url}, {"url": "http://ignored.example"}],
        "paths": {
            "/items/{itemId}": {
                "parameters": [
                    {"in": "path", "name": "itemId", "required": True, "schema": {"type": "string"}}
                ],
                "put": {
                    "operationId": "updateItem",
                    "description": "Update an item",
                    "parameters": [
                        {
                            "in": "query",
                            "name": "tags",
                            "schema": {"type": "array", "items": {"type": "string"}},
                        },
                        {"in": "query", "name": "dry", "schema": {"type": "boolean"}},
                        {"in": "header", "name": "X-Trace", "schema": {"type": "string"}},
                    ],
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Item"}}},
                    },
                },
                "delete": {"operationId": "oldDelete", "deprecated": True},
            },
            "/search": {
                "get": {
                    "summary": "Search things",
                    "parameters": [
                        {
                            "in": "query",
                            "name": "q",
                            "required": True,
                            "schema": {"type": "string", "minLength": 2},
                        }
                    ],
                }
            },
            "/status/{code}": {
                "get": {
                    "operationId": "status",
                    "parameters": [
                        {"in": "path", "name": "code", "required": True, "schema": {"type": "integer"}}
                    ],
                }
            },
        },
        "components": {
            "schemas": {
                "Item": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "name": {"type": "string", "description": "Display name"},
                        "count": {"type": "integer", "minimum": 0},
                        "meta": {"type": "object", "properties": {"note": {"type": ["string", "null"]}}},
                    },
                    "required": ["name"],
                }
            }
        },
    }


def call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"id": "c", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def test_operations_server_names_and_deprecated(server_url: str) -> None:
    schema = parse_openapi_document(openapi3(server_url))
    assert schema.server_url == server_url
    assert [(op.method, op.name) for op in schema.operations] == [
        ("put", "updateItem"),
        ("get", "/search"),
        ("get", "status"),
    ]
    assert schema.operations[1].description == "Search things"


def test_swagger2_server_url_body_parameter_and_yaml() -> None:
    doc = """
swagger: "2.0"
info: {title: Legacy, version: "1"}
host: api.example.com
basePath: /base
paths:
  /echo:
    post:
      parameters:
        - in: body
          name: body
          schema: {type: object, properties: {value: {type: string}}}
        - {in: query, name: limit, type: integer, minimum: 1}
"""
    schema = parse_openapi_document(doc)
    assert schema.server_url == "https://api.example.com/base"
    op = schema.operations[0]
    assert op.name == "/echo"
    assert op.request_body == {
        "required": False,
        "content": {
            "application/json": {"schema": {"type": "object", "properties": {"value": {"type": "string"}}}}
        },
    }
    assert [p["name"] for p in op.params] == ["limit"]
    assert op.params[0]["schema"] == {"type": "integer", "minimum": 1}
    spec = build_openapi_request(op, {"value": "legacy", "limit": 2, "omitted": None})
    assert spec.json_body == {"value": "legacy"}
    assert spec.query == [("limit", "2")]


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ("", "Invalid Schema: the document is empty"),
        ("[1, 2]", "Invalid Schema: the document must be an object, got list"),
        ("{not json: [", "Invalid Schema: neither JSON nor YAML"),
        (
            {"info": {}, "paths": {}},
            "Invalid Schema: missing 'openapi' (3.x) or 'swagger' (2.0) version field",
        ),
        ({"openapi": "3.0.0"}, "Invalid Schema: 'paths' must be an object"),
        ({"openapi": "1.0", "paths": {}}, "Invalid Schema: unsupported version '1.0'"),
        (
            {
                "openapi": "3.0.0",
                "paths": {"/a": {"get": {"parameters": [{"$ref": "#/components/parameters/Nope"}]}}},
            },
            "Invalid Schema: $ref not found: #/components/parameters/Nope",
        ),
        (
            {"openapi": "3.0.0", "paths": {"/a": {"get": {"parameters": [{"$ref": "http://evil/x.json"}]}}}},
            "Invalid Schema: external $ref is not supported",
        ),
        (
            {"openapi": "3.0.0", "paths": {"/a": {"get": {"parameters": [{"in": "query"}]}}}},
            "Invalid Schema: GET /a",
        ),
    ],
)
def test_invalid_documents_raise_invalid_schema_naming_the_problem(document: Any, problem: str) -> None:
    with pytest.raises(OpenApiSchemaError) as info:
        parse_openapi_document(document)
    assert str(info.value).startswith(problem)


def test_recursive_schemas_terminate() -> None:
    doc = {
        "openapi": "3.1.0",
        "paths": {
            "/n": {
                "post": {
                    "operationId": "node",
                    "requestBody": {
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Node"}}}
                    },
                }
            }
        },
        "components": {
            "schemas": {
                "Node": {
                    "type": "object",
                    "properties": {
                        "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}
                    },
                }
            }
        },
    }
    op = parse_openapi_document(doc).operations[0]
    assert op.request_body is not None
    children = op.request_body["content"]["application/json"]["schema"]["properties"]["children"]
    assert children == {"type": "array", "items": {}}


def test_model_schema_keeps_full_property_schemas(server_url: str, client: ToolHttpClient) -> None:
    tools = OpenApiToolSet(openapi3(server_url), client=client).tool_definitions()
    assert [t.name for t in tools] == ["updateItem", "search", "status"]
    update = tools[0].schema["function"]
    assert update["description"] == "Update an item"
    assert update["parameters"] == {
        "type": "object",
        "properties": {
            "itemId": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "dry": {"type": "boolean"},
            "X-Trace": {"type": "string"},
            "name": {"type": "string", "description": "Display name"},
            "count": {"type": "integer", "minimum": 0},
            "meta": {"type": "object", "properties": {"note": {"type": ["string", "null"]}}},
        },
        "required": ["itemId", "name"],
        "additionalProperties": False,
    }


async def test_params_are_placed_in_path_query_headers_and_body(
    server_url: str, client: ToolHttpClient
) -> None:
    toolset = OpenApiToolSet(
        openapi3(server_url),
        client=client,
        headers={"X-App": "fathom"},
        header_secret={"Bearer": {"value": "tok-123", "secret": ""}},
    )
    args = {
        "itemId": "a/b?c",
        "tags": ["x", "y"],
        "dry": False,
        "X-Trace": "trace-1",
        "name": "张三",
        "count": 0,
        "meta": {"note": None},
    }
    result = await run_tool(call("updateItem", args), [], toolset.tool_definitions())
    assert result.error_message is None, result.response
    echoed = json.loads(result.response)
    assert echoed["method"] == "PUT"
    assert echoed["path"] == "/v1/items/a%2Fb%3Fc"
    assert echoed["query"] == [["tags", "x"], ["tags", "y"], ["dry", "false"]]
    assert echoed["headers"]["x-trace"] == "trace-1"
    assert echoed["headers"]["x-app"] == "fathom"
    assert echoed["headers"]["authorization"] == "Bearer tok-123"
    assert echoed["body"] == {"name": "张三", "count": 0, "meta": {"note": None}}
    assert result.metadata["status"] == 200
    assert result.metadata["rawResponse"] == echoed


async def test_basic_and_custom_header_secrets(server_url: str, client: ToolHttpClient) -> None:
    toolset = OpenApiToolSet(
        openapi3(server_url), client=client, header_secret={"Basic": "dXNlcjpwdw==", "X-Key": {"value": "k"}}
    )
    result = await toolset.call("search", {"q": "fathom"})
    echoed = json.loads(result.response)
    assert echoed["headers"]["authorization"] == "Basic dXNlcjpwdw=="
    assert echoed["headers"]["x-key"] == "k"
    assert echoed["query"] == [["q", "fathom"]]
    assert echoed["body"] is None


async def test_encrypted_header_secrets_are_decrypted_by_the_secret_box(
    server_url: str, client: ToolHttpClient
) -> None:
    from fathom.security.secrets import SecretBox

    box = SecretBox("test-key")
    stored = box.store_secret_value({"Bearer": {"value": "sealed-token", "secret": ""}})
    assert stored["Bearer"]["value"] == ""
    toolset = OpenApiToolSet(openapi3(server_url), client=client, header_secret=stored, secrets=box)
    echoed = json.loads((await toolset.call("search", {"q": "abc"})).response)
    assert echoed["headers"]["authorization"] == "Bearer sealed-token"


async def test_runtime_params_are_asserted_before_every_call(server_url: str, client: ToolHttpClient) -> None:
    toolset = OpenApiToolSet(openapi3(server_url), client=client)
    with pytest.raises(ToolInputValidationError, match="Tool input validation failed: "):
        await toolset.call("updateItem", {"itemId": "1", "name": "n", "unknown": True})
    with pytest.raises(ToolInputValidationError, match="/q"):
        await toolset.call("search", {"q": "x"})
    # the model path reports the same check as text
    result = await run_tool(call("search", {"q": "x"}), [], toolset.tool_definitions())
    assert result.response.startswith("Tool input validation failed: ")


async def test_http_error_status_is_a_model_visible_tool_error(
    server_url: str, client: ToolHttpClient
) -> None:
    toolset = OpenApiToolSet(openapi3(server_url), client=client)
    result = await run_tool(call("status", {"code": 418}), [], toolset.tool_definitions())
    assert result.response == "Tool error: HTTP 418: teapot says no"


async def test_default_egress_guard_blocks_loopback(server_url: str) -> None:
    http = create_tool_http_client()
    try:
        toolset = OpenApiToolSet(openapi3(server_url), client=http)
        result = await run_tool(call("search", {"q": "abc"}), [], toolset.tool_definitions())
    finally:
        await http.aclose()  # type: ignore[attr-defined]
    assert result.response.startswith("Tool error: ")
    assert "127.0.0.1/32" in result.response  # the guard says how to allow it


@pytest.mark.parametrize(
    ("parameters", "path", "params", "error"),
    [
        ([], "/echo/{id}", {}, "Missing OpenAPI path parameter: id"),
        (
            [{"in": "path", "name": "id", "required": True}],
            "/echo/{id}",
            {"id": ".."},
            "Invalid OpenAPI path",
        ),
        ([{"in": "query", "name": "q", "required": True}], "/echo", {}, "Missing OpenAPI query parameter: q"),
        (
            [{"in": "cookie", "name": "s"}],
            "/echo",
            {"s": "v"},
            "Unsupported OpenAPI parameter location: cookie",
        ),
        (
            [{"in": "cookie", "name": "s", "required": True}],
            "/echo",
            {},
            "Missing OpenAPI cookie parameter: s",
        ),
    ],
)
def test_incomplete_requests_are_refused_before_sending(
    parameters: list[dict[str, Any]], path: str, params: dict[str, Any], error: str
) -> None:
    doc = {"openapi": "3.0.0", "paths": {path: {"post": {"parameters": parameters}}}}
    op = parse_openapi_document(doc).operations[0]
    with pytest.raises(OpenApiRequestError, match=error.replace("?", r"\?")):
        build_openapi_request(op, params)


def test_non_json_bodies_are_refused() -> None:
    doc = {
        "openapi": "3.0.0",
        "paths": {
            "/t": {"post": {"requestBody": {"content": {"text/plain": {"schema": {"type": "string"}}}}}}
        },
    }
    op = parse_openapi_document(doc).operations[0]
    with pytest.raises(OpenApiRequestError, match="Only application/json request bodies are supported"):
        build_openapi_request(op, {})


def test_header_arrays_and_objects_are_serialised() -> None:
    doc = {
        "openapi": "3.0.0",
        "paths": {
            "/h": {
                "get": {
                    "parameters": [
                        {"in": "header", "name": "X-Tags", "schema": {"type": "array"}},
                        {"in": "header", "name": "X-Flags", "schema": {"type": "object"}},
                    ]
                }
            }
        },
    }
    op = parse_openapi_document(doc).operations[0]
    spec = build_openapi_request(op, {"X-Tags": ["a", "b"], "X-Flags": {"active": False, "count": 0}})
    assert spec.headers == {"X-Tags": "a,b", "X-Flags": "active=false,count=0"}
    assert spec.has_body is False


@settings(max_examples=80, deadline=None)
@given(value=st.text(min_size=1, max_size=30).filter(lambda s: s not in (".", "..")))
def test_path_parameters_round_trip_through_percent_encoding(value: str) -> None:
    doc = {
        "openapi": "3.0.0",
        "paths": {
            "/files/{name}/raw": {
                "get": {
                    "parameters": [
                        {"in": "path", "name": "name", "required": True, "schema": {"type": "string"}}
                    ]
                }
            }
        },
    }
    op = parse_openapi_document(doc).operations[0]
    path = build_openapi_request(op, {"name": value}).path
    prefix, segment, suffix = path.split("/")[1], path.split("/")[2], path.split("/")[3]
    assert (prefix, suffix) == ("files", "raw")
    assert unquote(segment) == value


async def test_guard_from_settings_allows_what_the_settings_allow(server_url: str) -> None:
    from fathom.config import Settings
    from fathom.security.egress import EgressGuard, EgressPolicy

    guard = EgressGuard(EgressPolicy.from_settings(Settings(egress_allow_cidrs=["127.0.0.1/32"])))
    http = create_tool_http_client(guard)
    try:
        result = await OpenApiToolSet(openapi3(server_url), client=http).call("search", {"q": "settings"})
    finally:
        await http.aclose()  # type: ignore[attr-defined]
    assert json.loads(result.response)["query"] == [["q", "settings"]]
