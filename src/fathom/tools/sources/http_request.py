"""Turn an OpenAPI operation plus tool params into an HTTP request (FastGPT ``buildOpenAPIHttpRequest``).

Parameters go where the document says: ``path`` (percent-encoded, ``.``/``..`` refused), ``query``
(arrays as repeated keys), ``header`` (arrays joined by ``,``, objects as ``k=v,k=v``) and the JSON
body (only the body schema's properties). ``cookie`` parameters are not supported. Missing required
values are refused before anything is sent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from fathom.tools.sources.openapi import OpenApiOperation

__all__ = [
    "HttpRequestSpec",
    "OpenApiRequestError",
    "build_openapi_request",
    "operation_request_schema",
]

_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")
_JSON_TYPES = ("application/json",)


class OpenApiRequestError(ValueError):
    """The params cannot make a valid request for the operation."""


@dataclass
class HttpRequestSpec:
    """Method, path (placeholders filled), query pairs, headers and JSON body of one request."""

    method: str
    path: str
    query: list[tuple[str, str]] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    json_body: Any = None
    has_body: bool = False


def _json_media(content: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for media, value in content.items():
        base = media.split(";")[0].strip().lower()
        if base in _JSON_TYPES or base.endswith("+json") or base == "*/*":
            return value if isinstance(value, Mapping) else {}
    return None


def _body_schema(operation: OpenApiOperation) -> dict[str, Any] | None:
    """The JSON request-body schema, ``None`` without a body; refuses non-JSON bodies."""
    body = operation.request_body
    if not body:
        return None
    content = body.get("content") or {}
    media = _json_media(content) if isinstance(content, Mapping) else None
    if media is None:
        kinds = ", ".join(content) if isinstance(content, Mapping) else "?"
        raise OpenApiRequestError(
            f"Only application/json request bodies are supported ({operation.name}: {kinds})"
        )
    schema = media.get("schema") or {}
    return dict(schema) if isinstance(schema, Mapping) else {}


def _is_object_schema(schema: Mapping[str, Any]) -> bool:
    return schema.get("type") == "object" or "properties" in schema


def operation_request_schema(operation: OpenApiOperation) -> dict[str, Any]:
    """One object schema over every input of the operation (params + body properties), keeping each
    property's full JSON Schema. A body that is not an object schema sits under the key ``body``."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param in operation.params:
        if param.get("in") == "cookie":
            continue
        schema = dict(param.get("schema") or {})
        description = param.get("description") or schema.get("description")
        if description:
            schema["description"] = description
        properties[str(param["name"])] = schema
        if param.get("required") or param.get("in") == "path":
            required.append(str(param["name"]))
    closed = False
    body = _body_schema(operation)
    if body is not None:
        body_required = bool((operation.request_body or {}).get("required"))
        if _is_object_schema(body):
            for key, value in (body.get("properties") or {}).items():
                properties.setdefault(key, value)
            required.extend(k for k in body.get("required") or [] if k not in required)
            closed = body.get("additionalProperties") is False
        else:
            properties["body"] = body
            if body_required:
                required.append("body")
    result: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        result["required"] = required
    if closed:
        result["additionalProperties"] = False
    return result


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return str(value)


def _header_value(value: Any) -> str:
    if isinstance(value, list):
        return ",".join(_scalar(v) for v in value)
    if isinstance(value, Mapping):
        return ",".join(f"{k}={_scalar(v)}" for k, v in value.items())
    return _scalar(value)


def build_openapi_request(operation: OpenApiOperation, params: Mapping[str, Any]) -> HttpRequestSpec:
    """Place ``params`` into path, query, headers and body; raise :class:`OpenApiRequestError`."""
    spec = HttpRequestSpec(method=operation.method.upper(), path=operation.path)
    used: set[str] = set()
    declared_path: set[str] = set()
    for param in operation.params:
        name, where = str(param["name"]), str(param.get("in"))
        value = params.get(name)
        present = name in params and value is not None
        if where == "path":
            declared_path.add(name)
            if not present:
                raise OpenApiRequestError(f"Missing OpenAPI path parameter: {name}")
            text = _scalar(value)
            if text in ("", ".", ".."):
                raise OpenApiRequestError(f"Invalid OpenAPI path parameter: {name}")
            spec.path = spec.path.replace("{" + name + "}", quote(text, safe=""))
        elif where == "query":
            if not present:
                if param.get("required"):
                    raise OpenApiRequestError(f"Missing OpenAPI query parameter: {name}")
                continue
            values = value if isinstance(value, list) else [value]
            spec.query.extend((name, _scalar(v)) for v in values)
        elif where == "header":
            if not present:
                if param.get("required"):
                    raise OpenApiRequestError(f"Missing OpenAPI header parameter: {name}")
                continue
            spec.headers[name] = _header_value(value)
        elif where == "cookie":
            if present:
                raise OpenApiRequestError(f"Unsupported OpenAPI parameter location: cookie ({name})")
            if param.get("required"):
                raise OpenApiRequestError(f"Missing OpenAPI cookie parameter: {name}")
            continue
        else:
            raise OpenApiRequestError(f"Unsupported OpenAPI parameter location: {where} ({name})")
        used.add(name)
    for placeholder in _PLACEHOLDER.findall(spec.path):
        if placeholder not in declared_path:
            raise OpenApiRequestError(f"Missing OpenAPI path parameter: {placeholder}")
    schema = _body_schema(operation)
    if schema is not None:
        body_required = bool((operation.request_body or {}).get("required"))
        if _is_object_schema(schema):
            keys = schema.get("properties")
            if isinstance(keys, Mapping) and keys:
                body = {k: params[k] for k in keys if k in params and params[k] is not None}
            else:
                body = {k: v for k, v in params.items() if k not in used and v is not None}
            for key in schema.get("required") or []:
                if key not in body:
                    raise OpenApiRequestError(f"Missing OpenAPI body parameter: {key}")
            if body or body_required:
                spec.json_body, spec.has_body = body, True
        elif "body" in params:
            spec.json_body, spec.has_body = params["body"], True
        elif body_required:
            raise OpenApiRequestError("Missing OpenAPI body parameter: body")
    return spec
