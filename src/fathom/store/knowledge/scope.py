"""The shape of a search scope and of index records, as the knowledge domain's ports define them.

``fathom.store`` sits below ``fathom.knowledge`` and cannot import its types, so the SQL indexes accept
anything with these attributes (the domain's ``SearchScope``, ``TextRecord`` and ``VectorRecord`` do).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol


class ScopeLike(Protocol):
    @property
    def dataset_ids(self) -> Collection[str]: ...
    @property
    def collection_ids(self) -> Collection[str] | None: ...
    @property
    def exclude_collection_ids(self) -> Collection[str]: ...


class TextRecordLike(Protocol):
    @property
    def data_id(self) -> str: ...
    @property
    def dataset_id(self) -> str: ...
    @property
    def collection_id(self) -> str: ...
    @property
    def text(self) -> str: ...


class VectorRecordLike(Protocol):
    @property
    def index_id(self) -> str: ...
    @property
    def data_id(self) -> str: ...
    @property
    def dataset_id(self) -> str: ...
    @property
    def collection_id(self) -> str: ...
    @property
    def vector(self) -> Sequence[float]: ...
    @property
    def model_id(self) -> str: ...


def in_list(prefix: str, values: Collection[str], params: dict[str, Any]) -> str:
    """``:p0, :p1, …`` bound to ``values`` (``NULL`` for none, which matches nothing)."""
    names = []
    for i, value in enumerate(sorted(values)):
        params[f"{prefix}{i}"] = value
        names.append(f":{prefix}{i}")
    return ", ".join(names) or "NULL"


def scope_clauses(scope: ScopeLike, table: str) -> tuple[str, dict[str, Any]]:
    """A SQL condition (named parameters) restricting ``table`` rows to the scope."""
    params: dict[str, Any] = {}
    parts = [f"{table}.dataset_id IN ({in_list('ds', scope.dataset_ids, params)})"]
    if scope.collection_ids is not None:
        parts.append(f"{table}.collection_id IN ({in_list('c', scope.collection_ids, params)})")
    if scope.exclude_collection_ids:
        parts.append(f"{table}.collection_id NOT IN ({in_list('x', scope.exclude_collection_ids, params)})")
    return " AND ".join(parts), params


@dataclass(frozen=True)
class CollectionFacts:
    """What a search's collection filter reads of a collection (the domain's ``CollectionFactsLike``)."""

    id: str
    parent_id: str | None
    type: str
    tags: tuple[str, ...]
    created_at: datetime
