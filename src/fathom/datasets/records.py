"""The value types the knowledge-base services hand out and take in: the stored records (rows of
:mod:`fathom.store`, frozen dataclasses) and the store's refusals, named here so that callers of
:mod:`fathom.datasets` need no import of the store."""

from __future__ import annotations

from fathom.knowledge.search.types import SearchDataItem, SearchMode
from fathom.store.knowledge import TagRecord
from fathom.store.knowledge.sources import SyncRecord
from fathom.store.protocols import (
    ChunkRow,
    CollectionRecord,
    Conflict,
    DatasetRecord,
    NotFound,
    TrainingItemRecord,
)

__all__ = [
    "ChunkRow",
    "CollectionRecord",
    "Conflict",
    "DatasetRecord",
    "NotFound",
    "SearchDataItem",
    "SearchMode",
    "SyncRecord",
    "TagRecord",
    "TrainingItemRecord",
]
