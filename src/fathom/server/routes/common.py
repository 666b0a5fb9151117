"""Helpers shared by the route modules: request parameters, the platform, id checks."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from fastapi import Request

from fathom.platform import Platform
from fathom.server.errors import ApiError, not_found
from fathom.server.json_body import check_storable, parse_json

ANY_METHOD = ["GET", "POST", "PUT", "DELETE", "PATCH"]
_OBJECT_ID = re.compile(r"^[0-9a-f]{24}$")


def platform_of(request: Request) -> Platform:
    platform: Platform = request.app.state.platform
    return platform


async def params(request: Request) -> dict[str, Any]:
    """Query-string values overlaid by the JSON body's (FastGPT handlers read either). Bodies that
    are not UTF-8 JSON objects, nest too deep or carry unstorable text are a 400 naming the problem.
    Read once per request: a second reader (the history routes' caller check, then their typed
    parameters) gets a copy of the first reading."""
    read: dict[str, Any] | None = getattr(request.state, "fathom_params", None)
    if read is None:
        read = dict(request.query_params)
        check_storable(read, "query")
        read.update(await json_object(request))
        request.state.fathom_params = read
    return dict(read)


async def json_object(request: Request) -> dict[str, Any]:
    """The JSON object the body carries ({} for an empty body): the one place a route's body is read,
    so every route refuses the same bad bodies with the same 400 (see :mod:`fathom.server.json_body`)."""
    raw = await request.body()
    if not raw.strip():
        return {}
    body = parse_json(raw)
    if not isinstance(body, dict):
        raise ApiError(400, "invalidParams", "body: must be a JSON object")
    return body


def _required(values: dict[str, Any], field: str) -> Any:
    value = values.get(field)
    if value is None or value == "":
        raise ApiError(400, "missingParams", f"{field}: is required")
    return value


#: the record kind an id field names, for FastGPT's "does not exist" error
ID_KINDS = {"appId": "app", "datasetId": "dataset", "collectionId": "collection", "dataId": "data"}


def object_id(values: dict[str, Any], field: str, kind: str | None = None) -> str:
    """A required 24-hex id; anything else is answered as FastGPT's "does not exist" error for
    ``kind`` (default: the kind ``field`` names), since no record can have it."""
    value = str(_required(values, field))
    if not _OBJECT_ID.match(value):
        shown = value if len(value) <= 64 else value[:64] + "…"
        raise not_found(kind or ID_KINDS.get(field, ""), f"{field}: no record has the id {shown!r}")
    return value


def iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None
