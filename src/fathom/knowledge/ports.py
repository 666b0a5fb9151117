"""What the knowledge domain needs from the outside, as small protocols.

Storage backends (SQLite FTS5 + numpy, PostgreSQL tsvector + pgvector) implement ``FullTextIndex``,
``VectorIndex`` and ``ChunkStore``; model clients implement ``Embedder`` and ``Reranker``.
``fathom.knowledge.memory_index`` holds the in-memory reference implementations every backend must
agree with.

Scores: ``VectorIndex.search`` returns cosine similarity (higher is better, in [-1, 1]);
``FullTextIndex.search`` returns a relevance score where higher is better (BM25, ``ts_rank``, or
``-bm25()`` for FTS5). Both return at most ``limit`` hits, best first, and only rows inside ``scope``.
Several vectors (the chunk's indexes) may point at one ``data_id``; hits may repeat a ``data_id``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from fathom.knowledge.search.types import SearchDataItem


@dataclass(frozen=True)
class SearchScope:
    """Which rows a search may see: these knowledge bases, optionally only these collections
    (``None`` = all), never the excluded (forbidden) collections."""

    dataset_ids: Collection[str]
    collection_ids: Collection[str] | None = None
    exclude_collection_ids: Collection[str] = field(default_factory=frozenset)

    def allows(self, dataset_id: str, collection_id: str) -> bool:
        """True when a row of this knowledge base and collection is inside the scope."""
        if dataset_id not in self.dataset_ids or collection_id in self.exclude_collection_ids:
            return False
        return self.collection_ids is None or collection_id in self.collection_ids


@dataclass(frozen=True)
class TextRecord:
    """One full-text row: the searchable text of a chunk index (or the chunk itself)."""

    data_id: str
    dataset_id: str
    collection_id: str
    text: str


@dataclass(frozen=True)
class VectorRecord:
    """One vector row: an index of a chunk, embedded by ``model_id``."""

    index_id: str
    data_id: str
    dataset_id: str
    collection_id: str
    vector: Sequence[float]
    model_id: str = ""


Hit = tuple[str, float]
"""``(data_id, score)``."""


@runtime_checkable
class FullTextIndex(Protocol):
    """Keyword search over chunk texts (Chinese segmented before indexing and querying)."""

    async def add(self, records: Sequence[TextRecord]) -> None: ...

    async def delete(
        self, *, data_ids: Collection[str] | None = None, collection_ids: Collection[str] | None = None
    ) -> int: ...

    async def search(self, query: str, limit: int, scope: SearchScope) -> list[Hit]: ...


@runtime_checkable
class VectorIndex(Protocol):
    """Nearest-neighbour search by cosine similarity."""

    async def add(self, records: Sequence[VectorRecord]) -> None: ...

    async def delete(
        self, *, data_ids: Collection[str] | None = None, collection_ids: Collection[str] | None = None
    ) -> int: ...

    async def search(self, vector: Sequence[float], limit: int, scope: SearchScope) -> list[Hit]: ...


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors. ``model_id`` is stored with every vector."""

    @property
    def model_id(self) -> str: ...

    @property
    def dimensions(self) -> int: ...

    async def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


@runtime_checkable
class Reranker(Protocol):
    """Scores documents against a query: ``(document index, relevance)`` pairs, best first."""

    async def rerank(self, query: str, documents: Sequence[str]) -> list[tuple[int, float]]: ...


@runtime_checkable
class ChunkStore(Protocol):
    """Loads chunk rows (``q``, ``a``, source fields) for the ids a search recalled."""

    async def get_many(self, data_ids: Sequence[str]) -> Mapping[str, SearchDataItem]: ...


TokenCounter = Callable[[str], int]
"""Counts the tokens of a text (``fathom.llm.count_tokens`` in production)."""
