"""Typed requests and responses: each route declares a pydantic model of what it reads and of what it
answers, and this module turns them into validation and into the OpenAPI document.

Requests. FastGPT's handlers read their parameters from the query string or the JSON body alike, so a
route's model is validated against both merged (the body wins), by the dependency :func:`parsed`:

    async def create_key(payload: CreateKey = parsed(CreateKey), ...) -> ...

A failure is FastGPT's ``invalidParams`` envelope (HTTP 400) naming each field and the reason, never
FastAPI's 422 shape; an id field (``ObjectId``) that cannot be an id answers FastGPT's "does not exist"
error for its kind, as no record can have it. Unknown fields are kept (``extra="allow"``): FastGPT's
clients send more than a route reads. Values are read leniently where the query string needs it (``"10"``
is 10, ``"true"`` is true).

Responses. :func:`answers` declares a route's ``data`` model inside FastGPT's envelope for the OpenAPI
document only: handlers build their answers directly (the hot chat path pays nothing for a second
validation), and the fuzz test checks every answer against the declared schema instead.

The document. :func:`document_typed_routes` adds each request model as the request body of the route's
POST/PUT/PATCH operations and as query parameters of its GET/DELETE ones.
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable, Iterable, Iterator
from typing import Annotated, Any, ClassVar, Generic, TypeVar, overload

from fastapi import Depends, Request
from fastapi.routing import APIRoute
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints, ValidationError

from fathom.server.errors import ApiError, not_found
from fathom.server.json_body import parse_json
from fathom.server.routes.common import ID_KINDS, params

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

#: a 24-hex record id (FastGPT's Mongo ObjectId)
OBJECT_ID_PATTERN = r"^[0-9a-f]{24}$"
ObjectId = Annotated[
    str, StringConstraints(pattern=OBJECT_ID_PATTERN), Field(examples=["6650a1b2c3d4e5f6a7b8c9d0"])
]


def _blank_as_none(value: Any) -> Any:
    return None if value == "" else value


#: ``Annotated[X | None, BLANK_IS_NONE]``: "" means absent, as FastGPT's clients send it
BLANK_IS_NONE = BeforeValidator(_blank_as_none)
#: an optional id: absent, null and "" all mean none (FastGPT's clients send each)
OptionalObjectId = Annotated[ObjectId | None, BLANK_IS_NONE]
#: FastGPT's 100-character names (apps, keys, collections); knowledge bases allow 200
Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)]
#: free text that is stored (intros, titles): bounded so every backend can keep it
Text = Annotated[str, StringConstraints(max_length=100_000)]


def _number_as_text(value: Any) -> Any:
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


#: a client-chosen token (chat ids, user ids): FastGPT's clients send numbers for it too
Token = Annotated[str, StringConstraints(max_length=128), BeforeValidator(_number_as_text)]


@overload
def as_flag(value: Any, default: bool) -> bool: ...


@overload
def as_flag(value: Any, default: None = None) -> bool | None: ...


def as_flag(value: Any, default: bool | None = None) -> bool | None:
    """A boolean as FastGPT's clients send it, in a JSON body or a query string: JSON's, ``"true"``/``"1"``/
    ``"yes"`` (any other text is false), any other value's truth; absent (None or ``""``): ``default``."""
    if value is None or value == "":
        return default
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes")
    return bool(value)


#: a boolean as FastGPT's clients send it: JSON, "true"/"1"/"yes", any other value's truth; "" is absent
Flag = Annotated[bool | None, BeforeValidator(as_flag)]


class ApiModel(BaseModel):
    """A request's fields under FastGPT's names; unknown fields are accepted and kept.

    ``id_kinds`` names the record kind of an id field beyond the shared ones (``appId``, ``datasetId``
    ...), so a malformed ``id`` answers that kind's not-found error."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)
    id_kinds: ClassVar[dict[str, str]] = {}

    def fields(self) -> dict[str, Any]:
        """The values the request sent (validated, under FastGPT's names, unknown fields kept)."""
        return self.model_dump(by_alias=True, exclude_unset=True)


class NoParams(ApiModel):
    """A route that reads no parameters (any sent are ignored)."""


class Envelope(BaseModel, Generic[T]):
    """FastGPT's response envelope."""

    code: int = Field(examples=[200])
    statusText: str = ""
    message: str = ""
    data: T


class ErrorEnvelope(BaseModel):
    """FastGPT's envelope of a refused request: ``statusText`` names the error, ``message`` the field."""

    code: int = Field(examples=[507000])
    statusText: str = Field(examples=["invalidParams"])
    message: str = Field(examples=["name: String should have at most 100 characters"])
    data: None = None


def _field_of(error: Any) -> str:
    location = [str(part) for part in error.get("loc", ())]
    return ".".join(location) or "body"


def _reason(error: Any) -> str:
    """The house wording for the common failures, pydantic's own for the rest."""
    kind, context, value = error.get("type"), error.get("ctx") or {}, error.get("input")
    if kind == "missing" or (kind == "string_too_short" and context.get("min_length") == 1):
        return "is required"
    if kind == "string_pattern_mismatch" and value == "":
        return "is required"
    if kind == "value_error" and "error" in context:
        return str(context["error"])
    if kind == "string_too_long" and isinstance(value, str):
        return f"at most {context.get('max_length')} characters, got {len(value)}"
    if kind == "string_pattern_mismatch" and context.get("pattern") == OBJECT_ID_PATTERN:
        return f"must be a record id (24 hexadecimal digits), got {str(value)[:64]!r}"
    if kind == "literal_error":
        return f"{value!r} is not one of {context.get('expected')}"
    return str(error.get("msg", "invalid"))


def _validation_error(exc: ValidationError, kinds: dict[str, str] | None = None) -> ApiError:
    """FastGPT's ``invalidParams`` (HTTP 400) naming up to five fields and their reasons; a malformed id
    answers its kind's "does not exist" (404), as the handlers did before validation came first."""
    errors = exc.errors(include_url=False)
    kinds = ID_KINDS | (kinds or {})
    for error in errors:
        loc, value = error.get("loc", ()), error.get("input", "")
        if error.get("type") == "string_pattern_mismatch" and len(loc) == 1 and str(loc[0]) in kinds:
            if value == "":
                continue  # "" is an absent id: "is required"
            value = str(value)
            shown = value if len(value) <= 64 else value[:64] + "…"
            return not_found(kinds[str(loc[0])], f"{loc[0]}: no record has the id {shown!r}")
    missing = all(_reason(error) == "is required" for error in errors)
    text = "; ".join(f"{_field_of(error)}: {_reason(error)}" for error in errors[:5])
    if len(errors) > 5:
        text += f"; and {len(errors) - 5} more"
    return ApiError(400, "missingParams" if missing else "invalidParams", text)


def validate(model: type[M], values: dict[str, Any]) -> M:
    """``values`` as ``model``, or the 400 naming what is wrong."""
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        raise _validation_error(exc, getattr(model, "id_kinds", None)) from None


async def _form_values(request: Request, field: str) -> dict[str, Any]:
    """The JSON object a form (an upload) carries in its ``field`` form field."""
    form = await request.form()  # Starlette keeps the parsed form: the route reads its file from it
    values = parse_json(str(form.get(field) or "{}"), field)
    if not isinstance(values, dict):
        raise ApiError(400, "invalidParams", f"{field}: must be a JSON object")
    return values


_FORMS = ("multipart/form-data", "application/x-www-form-urlencoded")


def parsed(
    model: type[M],
    source: Callable[[Request], Awaitable[dict[str, Any]]] = params,
    *,
    form_field: str | None = None,
) -> Any:
    """The dependency that reads the query string and the JSON body, merged, as ``model`` (or what
    ``source`` reads: the account routes take passwords from the body only); with ``form_field``, a
    form's fields are the JSON object in that form field instead (FastGPT's uploads send ``file`` plus
    ``data``)."""

    async def read(request: Request) -> M:
        form = request.headers.get("content-type", "").startswith(_FORMS)
        if form_field is not None and form:
            return validate(model, await _form_values(request, form_field))
        return validate(model, await source(request))

    read.typed_request = model  # type: ignore[attr-defined]
    read.__name__ = f"read_{model.__name__}"
    return Depends(read)


def documents(model: type[M]) -> Any:
    """A dependency that only declares ``model`` as the route's request, for a handler that validates
    it itself with :func:`validate` (the chat routes answer a refused stream with an SSE error frame)."""

    async def declared() -> None:  # async: FastAPI runs a plain ``def`` dependency on a worker thread
        return None

    declared.typed_request = model  # type: ignore[attr-defined]
    declared.__name__ = f"documents_{model.__name__}"
    return Depends(declared)


def answers(data: Any, *, description: str = "FastGPT's envelope") -> dict[int | str, dict[str, Any]]:
    """The ``responses`` of a route whose ``data`` is ``data`` (a model or type), plus the error envelope."""
    return {
        200: {"model": Envelope[data], "description": description},
        400: {"model": ErrorEnvelope, "description": "A field is missing or invalid (named in message)"},
        401: {"model": ErrorEnvelope, "description": "No or an unknown API key / session"},
        403: {"model": ErrorEnvelope, "description": "The caller may not do this"},
        404: {"model": ErrorEnvelope, "description": "The record does not exist (or is another team's)"},
    }


def _request_model(route: APIRoute) -> type[BaseModel] | None:
    """The model :func:`parsed` reads for ``route``, if it has one."""

    def walk(dependant: Any) -> Iterator[Any]:
        for dependency in dependant.dependencies:
            yield dependency.call
            yield from walk(dependency)

    for call in walk(route.dependant):
        model = getattr(call, "typed_request", None)
        if model is not None:
            return model
    return None


_SCALARS = {"string", "integer", "number", "boolean"}


def _is_scalar(schema: dict[str, Any]) -> bool:
    if schema.get("type") in _SCALARS:
        return True
    options = schema.get("anyOf") or []
    return bool(options) and all(o.get("type") in _SCALARS | {"null"} for o in options)


def _hoist(schema: dict[str, Any], components: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with its ``$defs`` moved into the document's components."""
    schema = copy.deepcopy(schema)
    for name, definition in schema.pop("$defs", {}).items():
        components.setdefault(name, definition)
    return schema


def _api_routes(routes: Iterable[Any]) -> Iterator[APIRoute]:
    """Every API route of ``routes``, looking into included routers (which keep their own list)."""
    for route in routes:
        if isinstance(route, APIRoute):
            yield route
        elif hasattr(route, "original_router"):
            yield from _api_routes(route.original_router.routes)
        elif hasattr(route, "routes"):
            yield from _api_routes(route.routes)


def _plain_answer(operation: dict[str, Any], components: dict[str, Any]) -> None:
    """A declared answer model replaces the bare object schema FastAPI infers from ``dict[str, Any]``;
    an answer declared as a JSON schema (an event stream's frames) has its ``$defs`` moved to the
    components."""
    for answer in operation.get("responses", {}).values():
        for content in answer.get("content", {}).values():
            schema = content.get("schema", {})
            if "$ref" in schema and len(schema) > 1:
                content["schema"] = {"$ref": schema["$ref"]}
            elif "$defs" in schema:
                content["schema"] = _hoist(schema, components)


def document_typed_routes(routes: Iterable[Any], document: dict[str, Any]) -> None:
    """Fill each typed route's operations in ``document`` with its request model."""
    components = document.setdefault("components", {}).setdefault("schemas", {})
    paths = document.get("paths", {})
    for operations in paths.values():
        for operation in operations.values():
            if isinstance(operation, dict):
                _plain_answer(operation, components)
    for route in _api_routes(routes):
        model = _request_model(route)
        if model is None:
            continue
        schema = _hoist(model.model_json_schema(ref_template="#/components/schemas/{model}"), components)
        components.setdefault(model.__name__, schema)
        required = set(schema.get("required", []))
        for method in route.methods or ():
            operation = paths.get(route.path_format, {}).get(method.lower())
            if operation is None:
                continue
            if method in ("GET", "DELETE", "HEAD"):
                operation["parameters"] = [
                    {
                        "name": name,
                        "in": "query",
                        "required": name in required,
                        "schema": {k: v for k, v in prop.items() if k != "title"},
                    }
                    for name, prop in schema.get("properties", {}).items()
                    if _is_scalar(prop)
                ] + [p for p in operation.get("parameters", []) if p.get("in") != "query"]
            elif "multipart/form-data" not in operation.get("requestBody", {}).get("content", {}):
                operation["requestBody"] = {
                    "required": bool(required),
                    "content": {
                        "application/json": {"schema": {"$ref": f"#/components/schemas/{model.__name__}"}}
                    },
                }
