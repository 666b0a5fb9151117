"""The shape of a search scope and of index records, as the knowledge domain's ports define them.

``fathom.store`` sits below ``fathom.knowledge`` and cannot import its types, so the SQL indexes accept
anything with these attributes (the domain's ``SearchScope``, ``TextRecord`` and ``VectorRecord`` do).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
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


def scope_clauses(scope: ScopeLike, table: str) -> tuple[str, dict[str, Any]]:
    """A SQL condition (named parameters) restricting ``table`` rows to the scope."""
    params: dict[str, Any] = {}
    parts = []
    names = []
    for i, dataset_id in enumerate(sorted(scope.dataset_ids)):
        params[f"ds{i}"] = dataset_id
        names.append(f":ds{i}")
    parts.append(f"{table}.dataset_id IN ({', '.join(names) or 'NULL'})")
    if scope.collection_ids is not None:
        names = []
        for i, collection_id in enumerate(sorted(scope.collection_ids)):
            params[f"c{i}"] = collection_id
            names.append(f":c{i}")
        parts.append(f"{table}.collection_id IN ({', '.join(names) or 'NULL'})")
    if scope.exclude_collection_ids:
        names = []
        for i, collection_id in enumerate(sorted(scope.exclude_collection_ids)):
            params[f"x{i}"] = collection_id
            names.append(f":x{i}")
        parts.append(f"{table}.collection_id NOT IN ({', '.join(names)})")
    return " AND ".join(parts), params
