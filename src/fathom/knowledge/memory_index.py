"""In-memory reference implementations of the index and chunk-store protocols.

Real implementations, not mocks: exact cosine search with numpy and Okapi BM25 (k1 1.2, b 0.75) over
jieba-segmented tokens. They are what the tests use and what storage backends are checked against.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from fathom.knowledge.ports import Hit, SearchScope, TextRecord, VectorRecord
from fathom.knowledge.search.types import SearchDataItem
from fathom.knowledge.tokenize import segment


def _matches(
    data_id: str, collection_id: str, data_ids: Collection[str] | None, collection_ids: Collection[str] | None
) -> bool:
    return (data_ids is not None and data_id in data_ids) or (
        collection_ids is not None and collection_id in collection_ids
    )


def _best_per_data(scored: Iterable[tuple[str, float]], limit: int) -> list[Hit]:
    best: dict[str, float] = {}
    for data_id, score in scored:
        if data_id not in best or score > best[data_id]:
            best[data_id] = score
    return sorted(best.items(), key=lambda hit: -hit[1])[:limit]


@dataclass
class _Doc:
    record: TextRecord
    terms: Counter[str]
    length: int


class MemoryFullTextIndex:
    """BM25 over segmented tokens; a chunk's score is its best row's score."""

    def __init__(
        self, *, k1: float = 1.2, b: float = 0.75, tokenizer: Callable[[str], list[str]] = segment
    ) -> None:
        self.k1, self.b, self._tokenize = k1, b, tokenizer
        self._docs: dict[int, _Doc] = {}
        self._postings: dict[str, dict[int, int]] = {}
        self._next = 0
        self._total_length = 0

    def __len__(self) -> int:
        return len(self._docs)

    async def add(self, records: Sequence[TextRecord]) -> None:
        for record in records:
            terms = Counter(self._tokenize(record.text))
            doc = _Doc(record, terms, sum(terms.values()))
            self._docs[self._next] = doc
            for term, tf in terms.items():
                self._postings.setdefault(term, {})[self._next] = tf
            self._total_length += doc.length
            self._next += 1

    async def delete(
        self, *, data_ids: Collection[str] | None = None, collection_ids: Collection[str] | None = None
    ) -> int:
        doomed = [
            n
            for n, doc in self._docs.items()
            if _matches(doc.record.data_id, doc.record.collection_id, data_ids, collection_ids)
        ]
        for n in doomed:
            doc = self._docs.pop(n)
            self._total_length -= doc.length
            for term in doc.terms:
                postings = self._postings[term]
                del postings[n]
                if not postings:
                    del self._postings[term]
        return len(doomed)

    async def search(self, query: str, limit: int, scope: SearchScope) -> list[Hit]:
        if limit <= 0 or not self._docs:
            return []
        n_docs = len(self._docs)
        average = self._total_length / n_docs or 1.0
        scores: dict[int, float] = {}
        for term in set(self._tokenize(query)):
            postings = self._postings.get(term)
            if not postings:
                continue
            idf = math.log(1 + (n_docs - len(postings) + 0.5) / (len(postings) + 0.5))
            for n, tf in postings.items():
                norm = tf + self.k1 * (1 - self.b + self.b * self._docs[n].length / average)
                scores[n] = scores.get(n, 0.0) + idf * tf * (self.k1 + 1) / norm
        hits = (
            (self._docs[n].record.data_id, score)
            for n, score in scores.items()
            if scope.allows(self._docs[n].record.dataset_id, self._docs[n].record.collection_id)
        )
        return _best_per_data(hits, limit)


class MemoryVectorIndex:
    """Exact cosine search: one float32 matrix of unit rows, scanned with one matrix product."""

    def __init__(self, dimensions: int | None = None) -> None:
        self.dimensions = dimensions
        self._matrix = np.zeros((0, dimensions or 0), dtype=np.float32)
        self._records: list[VectorRecord] = []

    def __len__(self) -> int:
        return len(self._records)

    async def add(self, records: Sequence[VectorRecord]) -> None:
        if not records:
            return
        block = np.asarray([list(r.vector) for r in records], dtype=np.float32)
        if self.dimensions is None:
            self.dimensions = block.shape[1]
            self._matrix = np.zeros((0, self.dimensions), dtype=np.float32)
        if block.shape[1] != self.dimensions:
            raise ValueError(f"vector has {block.shape[1]} dimensions, the index holds {self.dimensions}")
        norms = np.linalg.norm(block, axis=1, keepdims=True)
        block = np.divide(block, norms, out=np.zeros_like(block), where=norms > 0)
        self._matrix = np.vstack([self._matrix, block])
        self._records.extend(records)

    async def delete(
        self, *, data_ids: Collection[str] | None = None, collection_ids: Collection[str] | None = None
    ) -> int:
        keep = [
            i
            for i, r in enumerate(self._records)
            if not _matches(r.data_id, r.collection_id, data_ids, collection_ids)
        ]
        removed = len(self._records) - len(keep)
        self._matrix = self._matrix[keep]
        self._records = [self._records[i] for i in keep]
        return removed

    async def search(self, vector: Sequence[float], limit: int, scope: SearchScope) -> list[Hit]:
        if limit <= 0 or not self._records:
            return []
        query = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(query))
        if norm == 0:
            return []
        scores = self._matrix @ (query / norm)
        allowed = np.fromiter(
            (scope.allows(r.dataset_id, r.collection_id) for r in self._records),
            dtype=bool,
            count=len(self._records),
        )
        scores = np.where(allowed, scores, -np.inf)
        order = np.argsort(-scores, kind="stable")
        hits: list[Hit] = []
        seen: set[str] = set()
        for i in order:
            if not allowed[i] or len(hits) >= limit:
                break
            data_id = self._records[i].data_id
            if data_id not in seen:
                seen.add(data_id)
                hits.append((data_id, float(scores[i])))
        return hits


class MemoryChunkStore:
    """Chunk rows by id."""

    def __init__(self, items: Iterable[SearchDataItem | Mapping[str, object]] = ()) -> None:
        self._rows: dict[str, SearchDataItem] = {}
        self.put(items)

    def put(self, items: Iterable[SearchDataItem | Mapping[str, object]]) -> None:
        for item in items:
            row = SearchDataItem.of(item)
            self._rows[row.id] = row

    def delete(self, data_ids: Collection[str]) -> None:
        for data_id in data_ids:
            self._rows.pop(data_id, None)

    async def get_many(self, data_ids: Sequence[str]) -> Mapping[str, SearchDataItem]:
        return {data_id: self._rows[data_id] for data_id in data_ids if data_id in self._rows}
