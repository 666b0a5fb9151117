"""FastGPT's pagination: ``pageSize`` plus ``offset`` or 1-based ``pageNum``; numbers may be strings."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BeforeValidator, Field

from fathom.server.errors import ApiError
from fathom.server.typed import ApiModel


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


def _blank_as_none(value: Any) -> Any:
    return None if value == "" else value


Count = Annotated[int | None, BeforeValidator(_blank_as_none)]


class PageQuery(ApiModel):
    """FastGPT's page fields: ``pageSize`` (default 10, capped per route), ``offset`` or 1-based
    ``pageNum``; numbers may be strings."""

    pageSize: Count = Field(None, ge=1, description="Items per page (default 10)")
    offset: Count = Field(None, ge=0, description="Items to skip")
    pageNum: Count = Field(None, description="1-based page number (when offset is 0 or absent)")

    def window(self, cap: int) -> tuple[int, int]:
        """(offset, page size) with the size at most ``cap``."""
        size = min(self.pageSize or 10, cap)
        offset = self.offset or 0
        if offset == 0 and self.pageNum is not None:
            offset = max(self.pageNum - 1, 0) * size
        return offset, size
