"""FastGPT's ``str2OpenApiSchema`` cases (OpenAPI / Swagger import for HTTP tool sets, spec §1.6.7),
restated as data, against ``fathom.tools.sources.openapi.parse_openapi_document``.

Source: labring/FastGPT ``packages/global/test/core/app/jsonschema.test.ts`` at
07e49cde0cda1642917c73044b11f72fcd911f10, ``describe('str2OpenApiSchema')``. FastGPT's ``serverPath`` /
``pathData`` are Fathom's ``server_url`` / ``operations`` (``request`` is ``request_body``); FastGPT
rejects with ``common:plugin.Invalid Schema``, Fathom raises ``OpenApiSchemaError`` ("Invalid Schema: …").
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from fathom.tools.sources.openapi import OpenApiSchema, OpenApiSchemaError, parse_openapi_document

SOURCE = "packages/global/test/core/app/jsonschema.test.ts@07e49cde0cda1642917c73044b11f72fcd911f10"
OS = "str2OpenApiSchema > "
INFO = {"title": "Test API", "version": "1.0.0"}
OK = {"200": {"description": "OK"}}


def v3(paths: dict[str, Any], **extra: Any) -> str:
    return json.dumps({"openapi": "3.0.0", "info": INFO, "paths": paths, **extra})


def v2(paths: dict[str, Any], **extra: Any) -> str:
    return json.dumps({"swagger": "2.0", "info": INFO, "paths": paths, **extra})


USER_BODY = {
    "content": {
        "application/json": {"schema": {"type": "object", "properties": {"name": {"type": "string"}}}}
    }
}


def check_local_ref(result: OpenApiSchema) -> None:
    body = result.operations[0].request_body or {}
    assert body["content"]["application/json"]["schema"]["properties"]["name"] == {"type": "string"}


def check_valid_3(result: OpenApiSchema) -> None:
    assert result.server_url == "https://api.example.com/v1"
    assert [(op.path, op.method, op.name, op.description) for op in result.operations] == [
        ("/users", "get", "getUsers", "Get all users")
    ]


def check_yaml(result: OpenApiSchema) -> None:
    assert result.server_url == "https://api.example.com"
    assert [(op.path, op.method, op.name, op.description) for op in result.operations] == [
        ("/items", "post", "createItem", "Create a new item")
    ]


YAML = """
openapi: '3.0.0'
info:
  title: Test API
  version: '1.0.0'
servers:
  - url: https://api.example.com
paths:
  /items:
    post:
      operationId: createItem
      description: Create a new item
      responses:
        '201':
          description: Created
"""

CASES: list[tuple[str, str, Any]] = [
    (
        OS + "should dereference local refs without resolving remote refs",
        v3(
            {
                "/users": {
                    "post": {
                        "operationId": "createUser",
                        "responses": OK,
                        "requestBody": {
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/User"}}}
                        },
                    }
                }
            },
            components={"schemas": {"User": {"type": "object", "properties": {"name": {"type": "string"}}}}},
        ),
        check_local_ref,
    ),
    (
        OS + "should parse valid OpenAPI 3.0 JSON schema",
        v3(
            {"/users": {"get": {"operationId": "getUsers", "summary": "Get all users", "responses": OK}}},
            servers=[{"url": "https://api.example.com/v1"}],
        ),
        check_valid_3,
    ),
    (OS + "should parse valid YAML schema", YAML, check_yaml),
    (
        OS + "should handle Swagger 2.0 host and basePath",
        v2(
            {"/test": {"get": {"operationId": "testEndpoint", "responses": OK}}},
            host="api.example.com",
            basePath="/v2",
            schemes=["https"],
        ),
        lambda r: r.server_url == "https://api.example.com/v2",
    ),
    (
        OS + "should default to https when no schemes provided in Swagger 2.0",
        v2(
            {"/test": {"get": {"operationId": "testEndpoint", "responses": OK}}},
            host="api.example.com",
            basePath="/api",
        ),
        lambda r: r.server_url == "https://api.example.com/api",
    ),
    (
        OS + "should handle multiple HTTP methods",
        v3(
            {
                "/resource": {
                    m: {"operationId": f"{m}Resource", "responses": OK}
                    for m in ("get", "post", "put", "delete", "patch")
                }
            }
        ),
        lambda r: sorted(op.method for op in r.operations) == ["delete", "get", "patch", "post", "put"],
    ),
    (
        OS + "should filter out deprecated methods",
        v3(
            {
                "/users": {
                    "get": {"operationId": "getUsers", "responses": OK},
                    "post": {"operationId": "createUser", "deprecated": True, "responses": OK},
                }
            }
        ),
        lambda r: [op.name for op in r.operations] == ["getUsers"],
    ),
    (
        OS + "should handle requestBody in OpenAPI 3.0",
        v3({"/users": {"post": {"operationId": "createUser", "requestBody": USER_BODY, "responses": OK}}}),
        lambda r: r.operations[0].request_body is not None and "content" in r.operations[0].request_body,
    ),
    (
        OS + "should handle body parameter in Swagger 2.0 style",
        v2(
            {
                "/users": {
                    "post": {
                        "operationId": "createUser",
                        "responses": OK,
                        "parameters": [
                            {
                                "in": "body",
                                "name": "body",
                                "schema": {"type": "object", "properties": {"name": {"type": "string"}}},
                            }
                        ],
                    }
                }
            }
        ),
        lambda r: "application/json" in (r.operations[0].request_body or {}).get("content", {}),
    ),
    (
        OS + "should use path as name when operationId is not provided",
        v3({"/users": {"get": {"summary": "Get users", "responses": OK}}}),
        lambda r: r.operations[0].name == "/users",
    ),
    (
        OS + "should use summary as description when description is not provided",
        v3(
            {
                "/users": {
                    "get": {"operationId": "getUsers", "summary": "Get all users summary", "responses": OK}
                }
            }
        ),
        lambda r: r.operations[0].description == "Get all users summary",
    ),
    (
        OS + "should return empty serverPath when no servers or host configured",
        v3({"/test": {"get": {"operationId": "test", "responses": OK}}}),
        lambda r: r.server_url == "",
    ),
    (
        OS + "should filter out non-HTTP methods",
        v3(
            {
                "/users": {
                    "get": {"operationId": "getUsers", "responses": OK},
                    "parameters": [{"name": "id", "in": "query"}],
                    "summary": "User operations",
                }
            }
        ),
        lambda r: [op.method for op in r.operations] == ["get"],
    ),
    (
        OS + "should handle parameters in path operations",
        v3(
            {
                "/users/{id}": {
                    "get": {
                        "operationId": "getUserById",
                        "responses": OK,
                        "parameters": [
                            {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}},
                            {"name": "include", "in": "query", "schema": {"type": "string"}},
                        ],
                    }
                }
            }
        ),
        lambda r: len(r.operations[0].params) == 2,
    ),
]

REJECTED: list[tuple[str, str]] = [
    (
        OS + "should reject remote refs without resolving them",
        v3(
            {},
            components={
                "schemas": {
                    "Leak": {"$ref": "http://169.254.169.254/latest/meta-data/iam/security-credentials/"}
                }
            },
        ),
    ),
    (OS + "should reject invalid schema", "this is not valid json or yaml {{{"),
    (OS + "should handle empty string input", ""),
]


@pytest.mark.parametrize(("name", "document", "check"), CASES, ids=[c[0] for c in CASES])
def test_parse_openapi_document_matches_fastgpt(name: str, document: str, check: Any) -> None:
    result = check(parse_openapi_document(document))
    assert result is None or result is True


@pytest.mark.parametrize(("name", "document"), REJECTED, ids=[c[0] for c in REJECTED])
def test_parse_openapi_document_rejects_as_fastgpt(name: str, document: str) -> None:
    with pytest.raises(OpenApiSchemaError) as raised:
        parse_openapi_document(document)
    assert str(raised.value).startswith("Invalid Schema")
