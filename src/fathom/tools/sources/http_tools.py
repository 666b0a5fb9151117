"""HTTP tools from an OpenAPI/Swagger document, executed through the tool HTTP client (egress guard).

``OpenApiToolSet(document, client=...)`` exposes one :class:`ToolDefinition` per operation. Each call
validates the full params against the operation's request schema (``assert_tool_runtime_params``),
places them into path/query/headers/body, adds the set's headers and secret headers (``Bearer`` ⇒
``Authorization: Bearer x``, ``Basic`` ⇒ ``Authorization: Basic x``, other keys as-is) and sends the
request. The model sees the response body (compact JSON, or text); a non-2xx status is a tool error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from fathom.tools.contract import ToolContext, ToolDefinition, ToolResult
from fathom.tools.http_client import ToolHttpClient
from fathom.tools.schema import assert_tool_runtime_params
from fathom.tools.sources.http_request import build_openapi_request, operation_request_schema
from fathom.tools.sources.openapi import OpenApiOperation, OpenApiSchema, parse_openapi_document
from fathom.tools.sources.runtime_tool import compile_json_schema_tool, runtime_tool_definition

__all__ = [
    "HttpToolError",
    "OpenApiToolSet",
    "SecretHeaderSource",
    "model_tool_name",
]

_MAX_ERROR_BODY = 500
_INVALID_NAME_CHARS = re.compile(r"[^a-zA-Z0-9_-]+")


class HttpToolError(RuntimeError):
    """The HTTP tool's server answered with a non-2xx status (or could not be reached)."""


class SecretHeaderSource(Protocol):
    """Turns a stored header-secret map into request headers (``SecretBox.get_secret_value``)."""

    def get_secret_value(self, store_secret: Mapping[str, Any] | None = None) -> dict[str, str]: ...


def _header_secret_headers(header_secret: Mapping[str, Any] | None) -> dict[str, str]:
    """Headers from plain (already decrypted) header secrets: ``{key: value}`` or ``{key: {value}}``."""
    headers: dict[str, str] = {}
    for key, entry in (header_secret or {}).items():
        value = entry.get("value") if isinstance(entry, Mapping) else entry
        if not value:
            if isinstance(entry, Mapping) and entry.get("secret"):
                raise ValueError(f"Header secret {key} is encrypted: pass secrets=SecretBox(...)")
            continue
        if key == "Bearer":
            headers["Authorization"] = f"Bearer {value}"
        elif key == "Basic":
            headers["Authorization"] = f"Basic {value}"
        else:
            headers[str(key)] = str(value)
    return headers


def model_tool_name(name: str, prefix: str = "") -> str:
    """A function name models accept (``^[a-zA-Z0-9_-]{1,64}$``) from an operationId or a path."""
    cleaned = _INVALID_NAME_CHARS.sub("_", f"{prefix}{name}").strip("_") or "tool"
    return cleaned[:64]


@dataclass
class HttpTool:
    """One operation as a tool: its model name, the operation and the full request schema."""

    model_name: str
    operation: OpenApiOperation
    request_schema: dict[str, Any]

    @property
    def description(self) -> str:
        return self.operation.description or self.operation.name


def _response_text(response: httpx.Response) -> tuple[str, Any]:
    content_type = response.headers.get("content-type", "")
    text = response.text
    if "json" in content_type.lower():
        try:
            data = response.json()
        except ValueError:
            return text, text
        return json.dumps(data, ensure_ascii=False, separators=(",", ":")), data
    return text, text


class OpenApiToolSet:
    """The tools of one OpenAPI/Swagger document, bound to a client, base URL and headers."""

    def __init__(
        self,
        document: str | bytes | Mapping[str, Any] | OpenApiSchema,
        *,
        client: ToolHttpClient,
        base_url: str | None = None,
        headers: Mapping[str, str] | None = None,
        header_secret: Mapping[str, Any] | None = None,
        secrets: SecretHeaderSource | None = None,
        name_prefix: str = "",
        timeout: float | None = 60.0,
    ) -> None:
        schema = document if isinstance(document, OpenApiSchema) else parse_openapi_document(document)
        self.schema = schema
        self.client = client
        self.base_url = (base_url if base_url is not None else schema.server_url).rstrip("/")
        self.headers = dict(headers or {})
        self.header_secret = dict(header_secret or {})
        self.secrets = secrets
        self.timeout = timeout
        self.tools: list[HttpTool] = []
        seen: set[str] = set()
        for op in schema.operations:
            name = model_tool_name(op.name, name_prefix)
            base, n = name, 2
            while name in seen:
                suffix = f"_{n}"
                name, n = base[: 64 - len(suffix)] + suffix, n + 1
            seen.add(name)
            self.tools.append(HttpTool(name, op, operation_request_schema(op)))

    def tool(self, name: str) -> HttpTool:
        """Look a tool up by model name or by operation name (operationId or path)."""
        for tool in self.tools:
            if name in (tool.model_name, tool.operation.name):
                return tool
        raise KeyError(f"OpenAPI operation not found: {name}")

    def _secret_headers(self) -> dict[str, str]:
        if not self.header_secret:
            return {}
        if self.secrets is not None:
            return self.secrets.get_secret_value(self.header_secret)
        return _header_secret_headers(self.header_secret)

    async def call(self, name: str, params: Mapping[str, Any]) -> ToolResult:
        """Validate, build and send one request; raises on invalid input or a failed request."""
        tool = self.tool(name)
        assert_tool_runtime_params(tool.request_schema, dict(params))
        spec = build_openapi_request(tool.operation, params)
        headers = {**self.headers, **self._secret_headers(), **spec.headers}
        kwargs: dict[str, Any] = {"headers": headers, "params": spec.query or None}
        if spec.has_body:
            kwargs["json"] = spec.json_body
        if self.timeout is not None:
            kwargs["timeout"] = self.timeout
        url = f"{self.base_url}{spec.path}"
        response = await self.client.request(spec.method, url, **kwargs)
        text, data = _response_text(response)
        if not 200 <= response.status_code < 300:
            raise HttpToolError(f"HTTP {response.status_code}: {text[:_MAX_ERROR_BODY]}")
        return ToolResult(
            response=text,
            metadata={"status": response.status_code, "rawResponse": data, "url": str(response.url)},
        )

    def _definition(self, tool: HttpTool, config: Mapping[str, Any] | None) -> ToolDefinition:
        async def execute(ctx: ToolContext) -> ToolResult:
            return await self.call(tool.model_name, ctx.params or {})

        compiled = compile_json_schema_tool(
            tool.model_name, tool.description, tool.request_schema, "http", config
        )
        metadata = {"path": tool.operation.path, "method": tool.operation.method}
        return runtime_tool_definition(compiled, execute, tool.request_schema, kind="http", metadata=metadata)

    def tool_definitions(self, config: Mapping[str, Mapping[str, Any]] | None = None) -> list[ToolDefinition]:
        """One :class:`ToolDefinition` per operation, in document order. ``config`` fixes inputs per
        tool name (``{tool: {key: value}}``): those keys leave the model schema and are always sent
        with the builder's value (the tool-input runtime)."""
        return [self._definition(tool, (config or {}).get(tool.model_name)) for tool in self.tools]
