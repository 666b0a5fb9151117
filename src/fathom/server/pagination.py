"""FastGPT's pagination: ``pageSize`` plus ``offset`` or 1-based ``pageNum``; numbers may be strings."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fathom.server.errors import ApiError


def _number(value: Any, field: str, default: int) -> int:
    if value is None or value == "":
        return default
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ApiError(400, "invalidParams", f"{field}: must be a whole number, got {value!r}") from None


def page_window(body: Mapping[str, Any], query: Mapping[str, Any], *, cap: int = 30) -> tuple[int, int]:
    """(offset, page size). Read from the body when it has ``pageSize``, else from the query string."""
    source = body if "pageSize" in body else query
    size = _number(source.get("pageSize"), "pageSize", 10)
    if size < 1:
        raise ApiError(400, "invalidParams", "pageSize: must be at least 1")
    size = min(size, cap)
    offset = _number(source.get("offset"), "offset", 0)
    if offset < 0:
        raise ApiError(400, "invalidParams", "offset: must not be negative")
    if offset == 0 and source.get("pageNum") not in (None, ""):
        page = _number(source.get("pageNum"), "pageNum", 1)
        offset = max(page - 1, 0) * size
    return offset, size
