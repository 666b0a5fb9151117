"""FastGPT's pagination: ``pageSize`` plus ``offset`` or 1-based ``pageNum``; numbers may be strings.
:class:`PageQuery` reads a request's page fields (:func:`page_window` is its one reading); :class:`Page`
is every paged answer's ``{list, total}``."""

from __future__ import annotations

import builtins
from typing import Annotated, Any, Generic, TypeVar

from pydantic import BaseModel, BeforeValidator, Field

from fathom.server.typed import ApiModel

T = TypeVar("T")


def page_window(
    page_size: int | None, offset: int | None, page_num: int | None, *, cap: int
) -> tuple[int, int]:
    """(offset, page size): ``pageSize`` (default 10) at most ``cap``; ``pageNum`` counts when
    ``offset`` is 0 or absent."""
    size = min(page_size or 10, cap)
    start = offset or 0
    if start == 0 and page_num is not None:
        start = max(page_num - 1, 0) * size
    return start, size


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
        return page_window(self.pageSize, self.offset, self.pageNum, cap=cap)


class Page(BaseModel, Generic[T]):
    """FastGPT's page of a list: the items of this page and how many there are in all."""

    list: builtins.list[T]
    total: int
