"""Read an OpenAPI 3 or Swagger 2 document into operations (FastGPT ``str2OpenApiSchema``, spec §1.6.7).

- The document may be a mapping, JSON text or YAML text.
- Local ``$ref``s (``#/...``) are dereferenced; file and http references are refused, never fetched.
- Server URL: the first ``servers[].url``, else ``{scheme}://{host}{basePath}`` (scheme default https).
- Operations: ``get/post/put/delete/patch``; ``deprecated`` ones are skipped; name = ``operationId``
  or the path; path-level parameters are inherited (an operation parameter with the same
  ``in`` + ``name`` overrides); a Swagger 2 ``in: body`` parameter becomes
  ``requestBody.content['application/json'].schema``.
- Anything unreadable raises :class:`OpenApiSchemaError` whose message starts with ``Invalid Schema``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "HTTP_METHODS",
    "OpenApiOperation",
    "OpenApiSchema",
    "OpenApiSchemaError",
    "parse_openapi_document",
]

HTTP_METHODS = ("get", "post", "put", "delete", "patch")
_SWAGGER2_SCHEMA_KEYS = (
    "type",
    "format",
    "items",
    "enum",
    "default",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "multipleOf",
)


class OpenApiSchemaError(ValueError):
    """The document is not a usable OpenAPI/Swagger document. Message: ``Invalid Schema: {problem}``."""

    def __init__(self, problem: str) -> None:
        super().__init__(f"Invalid Schema: {problem}")
        self.problem = problem


@dataclass
class OpenApiOperation:
    """One callable operation (FastGPT ``PathDataType``)."""

    path: str
    method: str
    name: str
    description: str = ""
    params: list[dict[str, Any]] = field(default_factory=list)
    request_body: dict[str, Any] | None = None
    responses: dict[str, Any] = field(default_factory=dict)


@dataclass
class OpenApiSchema:
    """The server URL and the operations of a document."""

    server_url: str
    operations: list[OpenApiOperation]

    def operation(self, name: str) -> OpenApiOperation:
        for op in self.operations:
            if op.name == name:
                return op
        raise KeyError(f"OpenAPI operation not found: {name}")


def _load(document: str | bytes | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(document, Mapping):
        return copy.deepcopy(dict(document))
    text = document.decode("utf-8") if isinstance(document, bytes) else document
    if not isinstance(text, str) or not text.strip():
        raise OpenApiSchemaError("the document is empty")
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        import yaml

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise OpenApiSchemaError(f"neither JSON nor YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(data, dict):
        raise OpenApiSchemaError(f"the document must be an object, got {type(data).__name__}")
    return data


class _Dereferencer:
    """Replace local ``$ref``s by (copies of) their targets; cycles become ``{}`` (any value)."""

    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root

    def target(self, ref: str) -> Any:
        if not ref.startswith("#"):
            raise OpenApiSchemaError(f"external $ref is not supported (nothing is fetched): {ref}")
        node: Any = self.root
        pointer = ref[1:]
        if pointer in ("", "/"):
            return node
        for raw in pointer.lstrip("/").split("/"):
            part = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, Mapping) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise OpenApiSchemaError(f"$ref not found: {ref}")
        return node

    def resolve(self, node: Any, active: tuple[str, ...] = ()) -> Any:
        if isinstance(node, list):
            return [self.resolve(item, active) for item in node]
        if not isinstance(node, Mapping):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            if ref in active:
                return {key: value for key, value in node.items() if key != "$ref"}
            resolved = self.resolve(self.target(ref), (*active, ref))
            siblings = {k: self.resolve(v, active) for k, v in node.items() if k != "$ref"}
            if isinstance(resolved, Mapping):
                return {**resolved, **siblings}
            return resolved
        return {key: self.resolve(value, active) for key, value in node.items()}


def _server_url(data: Mapping[str, Any]) -> str:
    servers = data.get("servers")
    if isinstance(servers, list) and servers and isinstance(servers[0], Mapping):
        return str(servers[0].get("url") or "")
    if data.get("host") or data.get("basePath"):
        schemes = data.get("schemes")
        scheme = schemes[0] if isinstance(schemes, list) and schemes else "https"
        return f"{scheme}://{data.get('host') or ''}{data.get('basePath') or ''}"
    return ""


def _normalise_param(param: Mapping[str, Any], where: str) -> dict[str, Any]:
    if not isinstance(param, Mapping):
        raise OpenApiSchemaError(f"{where}: a parameter must be an object")
    if not param.get("name") or not param.get("in"):
        raise OpenApiSchemaError(f"{where}: every parameter needs 'name' and 'in'")
    out = dict(param)
    if "schema" not in out and out.get("in") != "body":
        schema = {key: out[key] for key in _SWAGGER2_SCHEMA_KEYS if key in out}
        if schema:  # Swagger 2 keeps the type on the parameter itself
            out["schema"] = schema
    return out


def _merge_params(inherited: list[dict[str, Any]], own: list[dict[str, Any]]) -> list[dict[str, Any]]:
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    for param in [*inherited, *own]:
        merged[(str(param["in"]), str(param["name"]))] = param
    return list(merged.values())


def _param_list(value: Any, where: str) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise OpenApiSchemaError(f"{where}: 'parameters' must be a list")
    return [_normalise_param(p, where) for p in value]


def parse_openapi_document(document: str | bytes | Mapping[str, Any]) -> OpenApiSchema:
    """Parse and dereference ``document``; raise :class:`OpenApiSchemaError` naming the problem."""
    raw = _load(document)
    version = raw.get("openapi", raw.get("swagger"))
    if version is None:
        raise OpenApiSchemaError("missing 'openapi' (3.x) or 'swagger' (2.0) version field")
    version_text = str(version)
    if not (version_text.startswith("3.") or version_text.startswith("2.")):
        raise OpenApiSchemaError(
            f"unsupported version {version_text!r} (expected OpenAPI 3.x or Swagger 2.0)"
        )
    paths = raw.get("paths")
    if not isinstance(paths, Mapping):
        raise OpenApiSchemaError("'paths' must be an object")
    data = _Dereferencer(raw).resolve(raw)
    operations: list[OpenApiOperation] = []
    for path, item in data["paths"].items():
        if not isinstance(item, Mapping):
            raise OpenApiSchemaError(f"path {path}: must be an object")
        inherited = _param_list(item.get("parameters"), f"path {path}")
        for method, info in item.items():
            if method.lower() not in HTTP_METHODS:
                continue
            where = f"{method.upper()} {path}"
            if not isinstance(info, Mapping):
                raise OpenApiSchemaError(f"{where}: the operation must be an object")
            if info.get("deprecated"):
                continue
            params = _merge_params(inherited, _param_list(info.get("parameters"), where))
            body = info.get("requestBody")
            body_param = next((p for p in params if p.get("in") == "body"), None)
            if body is None and body_param is not None:
                body = {
                    "required": bool(body_param.get("required")),
                    "content": {"application/json": {"schema": body_param.get("schema") or {}}},
                }
            if body is not None and not isinstance(body, Mapping):
                raise OpenApiSchemaError(f"{where}: 'requestBody' must be an object")
            operations.append(
                OpenApiOperation(
                    path=str(path),
                    method=method.lower(),
                    name=str(info.get("operationId") or path),
                    description=str(info.get("description") or info.get("summary") or ""),
                    params=[p for p in params if p.get("in") not in ("body", "formData")],
                    request_body=dict(body) if body is not None else None,
                    responses=dict(info.get("responses") or {}),
                )
            )
    return OpenApiSchema(server_url=_server_url(raw), operations=operations)
