"""Helpers shared by the route modules: request parameters, the platform, id checks."""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from fastapi import Request

from fathom.platform import Platform
from fathom.server.errors import ApiError

ANY_METHOD = ["GET", "POST", "PUT", "DELETE", "PATCH"]
_OBJECT_ID = re.compile(r"^[0-9a-f]{24}$")


def platform_of(request: Request) -> Platform:
    platform: Platform = request.app.state.platform
    return platform


async def params(request: Request) -> dict[str, Any]:
    """Query-string values overlaid by the JSON body's (FastGPT handlers read either)."""
    merged: dict[str, Any] = dict(request.query_params)
    raw = await request.body()
    if raw.strip():
        try:
            body = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ApiError(
                400, "invalidParams", f"body: not valid JSON ({exc.msg} at position {exc.pos})"
            ) from None
        if not isinstance(body, dict):
            raise ApiError(400, "invalidParams", "body: must be a JSON object")
        merged.update(body)
    return merged


def required(values: dict[str, Any], field: str) -> Any:
    value = values.get(field)
    if value is None or value == "":
        raise ApiError(400, "missingParams", f"{field}: is required")
    return value


def object_id(values: dict[str, Any], field: str) -> str:
    """A required 24-hex id; anything else is answered as not found (it cannot exist)."""
    value = str(required(values, field))
    if not _OBJECT_ID.match(value):
        raise ApiError(404, "unExist", f"{field}: no resource has the id {value!r}")
    return value


def iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None
