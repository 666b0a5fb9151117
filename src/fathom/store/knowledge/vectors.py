"""Vector search by cosine similarity.

SQLite: every dataset's vectors are held in memory as one float32 matrix and searched exactly with numpy;
a per-dataset ``index_version`` (bumped in the same transaction as every write) tells each process when its
copy is stale, so many processes can share one database. From ``QUANTIZED_MIN_ROWS`` rows on, a query first
scans an int8 copy of the matrix with SIMD dot products (simsimd; a quarter of the memory traffic), then
rescores the best ``_rescore_candidates`` rows in float32, so the scores returned are exact and the order
differs from a full float32 scan only when a true top hit falls outside the candidates.

PostgreSQL: pgvector HNSW indexes, one per vector dimension (``embedding::vector(N)`` where ``dims = N``),
with iterative scans so filters cannot starve results. A search of ``limit`` chunks asks the index for
``limit`` rows with ``hnsw.ef_search`` = ``limit`` (at least 40, pgvector's default): the candidate list
is what the recall pool consumes, not a fixed large number. Only when chunks with several index rows
leave the answer short of ``limit`` chunks does it ask again for more rows. The recall of this against an
exact scan is measured in ``fathom.bench.search_recall``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from sqlalchemy import delete, select, text

try:  # SIMD int8 dot products; without it every search is the float32 scan
    import simsimd
except ImportError:  # pragma: no cover - depends on the platform's wheels
    simsimd = None  # type: ignore[assignment]

from fathom.store.db import Database
from fathom.store.knowledge.index_rows import (
    index_row,
    insert_index_rows,
    normalised_vector,
    pgvector_literal,
)
from fathom.store.knowledge.scope import ScopeLike, VectorRecordLike, in_list, scope_clauses
from fathom.store.models import DataChunk, DataIndex

Hit = tuple[str, float]
QUANTIZED_MIN_ROWS = 20_000  # below this a float32 scan is as fast as the int8 one
HNSW_EF_MIN = 40  # pgvector's default ef_search
HNSW_MAX_ROWS = 1000  # pgvector's largest ef_search; also the most index rows one query asks for
# the rows of the in-memory matrix (SQLite): a dataset's vectors of its current model
_CURRENT_ROWS = "dataset_id = :d AND model = :m AND vector IS NOT NULL"


class VectorDimensionMismatch(ValueError):
    """The query vector does not fit the dataset's vectors (another embedding model made them)."""


@dataclass
class _Matrix:
    version: int
    data_ids: np.ndarray
    collection_ids: np.ndarray
    vectors: np.ndarray  # (n, dims) float32, rows L2-normalised
    quantized: np.ndarray | None = None  # (n, dims) int8: round(vectors * scale)
    model: str = ""
    last_rowid: int = 0  # SQLite rowid of the newest row held: rows after it can be appended
    scale: float = 0.0  # the int8 copy's scale (127 / the largest component when it was built)


def _quantization_scale(vectors: np.ndarray) -> float:
    """127 / the largest absolute component (1.0 for an all-zero or empty matrix)."""
    peak = float(np.abs(vectors).max()) if vectors.size else 0.0
    return 127.0 / peak if peak > 0 else 1.0


def _quantize(vectors: np.ndarray, scale: float | None = None) -> np.ndarray:
    """An int8 copy: ``vectors * scale`` rounded and clipped to ±127 (by default the scale that makes the
    largest component 127; rows appended later reuse the matrix's scale)."""
    factor = _quantization_scale(vectors) if scale is None else scale
    return np.clip(np.rint(vectors * factor), -127, 127).astype(np.int8)


def _exact_similarity(rows: np.ndarray, query: np.ndarray) -> np.ndarray:
    """float32 dot products of a few rows with the query, on this thread (numpy's BLAS would wake its
    thread pool for a product this small, which costs milliseconds on a busy machine)."""
    if simsimd is None:  # pragma: no cover - depends on the platform's wheels
        return rows @ query
    return np.asarray(simsimd.cdist(query[None, :], rows, metric="dot", out_dtype="float32"))[0]


def _rescore_candidates(limit: int) -> int:
    """How many int8-scan winners are rescored in float32 for a search of ``limit`` rows."""
    return max(4 * limit, 1024)


def _approximate_similarity(quantized: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Dot products of the int8 rows with the query (proportional to the float32 ones, not equal)."""
    if simsimd is None:  # pragma: no cover - depends on the platform's wheels
        return quantized.astype(np.float32) @ query
    return np.asarray(simsimd.cdist(_quantize(query[None, :]), quantized, metric="dot", out_dtype="float32"))[
        0
    ]


def _hnsw_ef_search(k: int) -> int:
    """PostgreSQL: ``hnsw.ef_search`` (the graph walk's candidate list) for a query of ``k`` rows."""
    return max(HNSW_EF_MIN, min(HNSW_MAX_ROWS, k))


def _best_per_data(data_ids: Sequence[str], scores: Sequence[float], limit: int) -> list[Hit]:
    best: dict[str, float] = {}
    for data_id, score in zip(data_ids, scores, strict=True):
        if score > best.get(data_id, -np.inf):
            best[data_id] = float(score)
    return sorted(best.items(), key=lambda hit: (-hit[1], hit[0]))[:limit]


_SAMPLE_STRIDE = 8  # ``_best``: every 8th score estimates the threshold of a large array's best


def _best(scores: np.ndarray, take: int) -> np.ndarray:
    """Positions of the ``take`` highest finite scores (in no particular order).

    A partition of the whole array costs ~1.2 ms at 100k scores, half the int8 scan that made them.
    Over an array at least ``8 × take`` long, the scores at or above a threshold go first: the threshold
    is the score ranked ``2 × take / 8`` in every 8th score, which about ``2 × take`` scores reach; only
    those are partitioned (0.2 ms at 100k). The ``take`` best are always among them when at least
    ``take`` reach it (each of the best is at least the ``take``-th score, which is at least the
    threshold); when fewer do, the whole array is partitioned."""
    size = len(scores)
    top: np.ndarray | None
    if not 0 < take < size:
        top = np.arange(size)
    else:
        top = _best_above_sample_threshold(scores, take) if size >= 8 * take else None
        if top is None:
            top = np.argpartition(-scores, take - 1)[:take]
    return top[np.isfinite(scores[top])]


def _best_above_sample_threshold(scores: np.ndarray, take: int) -> np.ndarray | None:
    """``_best``'s positions found among the scores at or above the sample's threshold; None when fewer
    than ``take`` reach it."""
    sample = scores[::_SAMPLE_STRIDE]
    position = len(sample) - 1 - min(len(sample) - 1, 2 * take // _SAMPLE_STRIDE)
    passing = np.flatnonzero(scores >= np.partition(sample, position)[position])
    if len(passing) < take:
        return None
    return passing[np.argpartition(-scores[passing], take - 1)[:take]]


class SqlVectorIndex:
    """``exact``: on PostgreSQL scan every row instead of the HNSW index (to measure the index's recall)."""

    def __init__(
        self, db: Database, *, quantized_min_rows: int = QUANTIZED_MIN_ROWS, exact: bool = False
    ) -> None:
        self.db = db
        self.exact = exact
        self.quantized_min_rows = quantized_min_rows
        self._matrices: dict[str, _Matrix] = {}
        self._hnsw_dims: set[int] = set()  # PostgreSQL: dimensions whose HNSW index this writer ensured
        self.full_loads = 0  # matrices loaded whole, and refreshed by appending rows (for tests and logs)
        self.appends = 0
        self._lock = asyncio.Lock()

    async def add(self, records: Sequence[VectorRecordLike]) -> None:
        """Add index vectors for chunks that already exist (``data_id`` must name a chunk row)."""
        from fathom.store.knowledge.datasets import bump_index_version

        async with self.db.transaction() as session:
            rows = []
            for record in records:
                chunk = await session.get(DataChunk, record.data_id)
                if chunk is None:
                    raise ValueError(f"vector {record.index_id}: chunk {record.data_id} does not exist")
                rows.append(
                    index_row(
                        team_id=chunk.team_id,
                        dataset_id=record.dataset_id,
                        collection_id=record.collection_id,
                        data_id=record.data_id,
                        text="",
                        model=record.model_id,
                        vector=record.vector,
                        is_postgres=self.db.is_postgres,
                        index_id=record.index_id,
                    )
                )
            await insert_index_rows(session, self.db.is_postgres, rows, self._hnsw_dims)
            await bump_index_version(session, sorted({r.dataset_id for r in records}))

    async def delete(
        self, *, data_ids: Collection[str] | None = None, collection_ids: Collection[str] | None = None
    ) -> int:
        from fathom.store.knowledge.datasets import bump_index_version

        conditions = []
        if data_ids:
            conditions.append(DataIndex.data_id.in_(list(data_ids)))
        if collection_ids:
            conditions.append(DataIndex.collection_id.in_(list(collection_ids)))
        if not conditions:
            return 0
        from sqlalchemy import or_

        async with self.db.transaction() as session:
            affected = list(
                await session.scalars(select(DataIndex.dataset_id).where(or_(*conditions)).distinct())
            )
            result = await session.execute(delete(DataIndex).where(or_(*conditions)))
            await bump_index_version(session, affected)
            return int(result.rowcount)  # type: ignore[attr-defined]

    async def search(self, vector: Sequence[float], limit: int, scope: ScopeLike) -> list[Hit]:
        if limit <= 0 or not scope.dataset_ids:
            return []
        query = normalised_vector(vector)
        if self.db.is_postgres:
            return await self._search_postgres(query, limit, scope)
        return await self._search_memory(query, limit, scope)

    async def _current(self, dataset_ids: Collection[str]) -> dict[str, _Matrix]:
        params: dict[str, Any] = {}
        marks = in_list("d", dataset_ids, params)
        rows = await self.db.read(  # runs on every search: the database's read path
            f"SELECT id, index_version, vector_model FROM datasets WHERE id IN ({marks})", params
        )
        versions = {str(row[0]): (int(row[1]), str(row[2])) for row in rows}
        async with self._lock:
            for dataset_id, (version, model) in versions.items():
                cached = self._matrices.get(dataset_id)
                if cached is None or cached.version != version:
                    self._matrices[dataset_id] = await self._refresh(dataset_id, version, model, cached)
            return {d: self._matrices[d] for d in versions}

    async def _refresh(self, dataset_id: str, version: int, model: str, cached: _Matrix | None) -> _Matrix:
        """The dataset's current matrix: the cached one with the rows written since appended when nothing
        else changed (an ingestion adds rows batch by batch: no reload of the whole matrix per batch), else
        a full load. Rows only ever get larger rowids, so "count = held + newer" proves nothing was deleted
        or replaced in between."""
        if cached is not None and cached.model == model and cached.vectors.size:
            params = {"d": dataset_id, "m": model, "r": cached.last_rowid}
            counted, newer = await self.db.read_many(
                [
                    (f"SELECT count(*) FROM data_indexes WHERE {_CURRENT_ROWS}", params),
                    (
                        "SELECT rowid, data_id, collection_id, vector FROM data_indexes "
                        f"WHERE {_CURRENT_ROWS} AND rowid > :r ORDER BY rowid",
                        params,
                    ),
                ]
            )
            if int(counted[0][0]) == len(cached.data_ids) + len(newer):
                self.appends += 1
                return self._append(cached, version, newer)
        self.full_loads += 1
        return await self._load(dataset_id, version, model)

    def _append(self, cached: _Matrix, version: int, rows: Sequence[Sequence[Any]]) -> _Matrix:
        """``cached`` with ``rows`` (``rowid, data_id, collection_id, vector``) added at the end; the int8
        copy grows with them, or is built once the matrix reaches ``quantized_min_rows``."""
        if not rows:
            return replace(cached, version=version)
        added = np.vstack([np.frombuffer(bytes(row[3] or b""), dtype="<f4") for row in rows])
        vectors = np.concatenate([cached.vectors, added]) if cached.vectors.size else added
        quantized, scale = cached.quantized, cached.scale
        if quantized is not None:  # new rows take the matrix's scale (a larger component is clipped)
            quantized = np.concatenate([quantized, _quantize(added, scale)])
        elif simsimd is not None and len(vectors) >= self.quantized_min_rows:
            scale = _quantization_scale(vectors)
            quantized = _quantize(vectors, scale)
        return replace(
            cached,
            version=version,
            data_ids=np.concatenate([cached.data_ids, np.array([row[1] for row in rows], dtype=object)]),
            collection_ids=np.concatenate(
                [cached.collection_ids, np.array([row[2] for row in rows], dtype=object)]
            ),
            vectors=vectors,
            quantized=quantized,
            last_rowid=max(cached.last_rowid, max(int(row[0]) for row in rows)),
            scale=scale,
        )

    async def _load(self, dataset_id: str, version: int, model: str) -> _Matrix:
        """The dataset's vectors of its current model (rows staged for a model switch are left out)."""
        rows = await self.db.read(
            f"SELECT rowid, data_id, collection_id, vector FROM data_indexes WHERE {_CURRENT_ROWS}",
            {"d": dataset_id, "m": model},
        )
        none = np.array([], dtype=object)
        return self._append(_Matrix(version, none, none, np.zeros((0, 0), "f4"), model=model), version, rows)

    async def _search_memory(self, query: np.ndarray, limit: int, scope: ScopeLike) -> list[Hit]:
        ids: list[str] = []
        scores: list[float] = []
        for dataset_id, matrix in (await self._current(scope.dataset_ids)).items():
            if matrix.vectors.shape[0] == 0:
                continue
            if matrix.vectors.shape[1] != query.shape[0]:
                raise VectorDimensionMismatch(
                    f"dataset {dataset_id} holds {matrix.vectors.shape[1]}-dimensional vectors but the query "
                    f"has {query.shape[0]}: search it with the embedding model it was built with"
                )
            if matrix.quantized is not None:
                similarity = _approximate_similarity(matrix.quantized, query)
            else:
                similarity = matrix.vectors @ query  # the whole matrix: cheaper than copying a masked one
            if scope.collection_ids is not None or scope.exclude_collection_ids:
                mask = np.ones(matrix.vectors.shape[0], dtype=bool)
                if scope.collection_ids is not None:
                    mask &= np.isin(matrix.collection_ids, list(scope.collection_ids))
                if scope.exclude_collection_ids:
                    mask &= ~np.isin(matrix.collection_ids, list(scope.exclude_collection_ids))
                if not mask.any():
                    continue
                similarity = np.where(mask, similarity, -np.inf)
                candidates = int(mask.sum())
            else:
                candidates = len(similarity)
            take = min(candidates, limit * 4)
            if matrix.quantized is not None:  # rescore the int8 winners in float32
                top = _best(similarity, min(candidates, _rescore_candidates(take)))
                exact = _exact_similarity(matrix.vectors[top], query)
                best = _best(exact, take)
                top, exact = top[best], exact[best]
            else:
                top = _best(similarity, take)
                exact = similarity[top]
            ids.extend(matrix.data_ids[top].tolist())
            scores.extend(exact.tolist())
        return _best_per_data(ids, scores, limit)

    async def _postgres_rows(self, sql: str, params: dict[str, Any]) -> Sequence[Sequence[Any]]:
        """The HNSW statement's rows: one round trip on the database's read path (autocommit), or with
        ``exact`` a sequential scan (a planner setting made first, in the statement's transaction)."""
        if not self.exact:
            return await self.db.read(sql, params)
        async with self.db.engine.begin() as conn:
            await conn.execute(text("SET LOCAL enable_indexscan = off"))
            return (await conn.execute(text(sql), params)).all()

    async def _search_postgres(self, query: np.ndarray, limit: int, scope: ScopeLike) -> list[Hit]:
        dims = int(query.shape[0])
        where, params = scope_clauses(scope, "data_indexes")
        # only the rows of each dataset's current model (rows staged for a model switch are left out)
        where += (
            " AND data_indexes.model = "
            "(SELECT d.vector_model FROM datasets d WHERE d.id = data_indexes.dataset_id)"
        )
        params["q"] = pgvector_literal(query)
        distance = f"(embedding::vector({dims}) <=> (SELECT q FROM search))"
        sql = (
            # The scan's settings are made inside the statement, so it is one round trip on its own
            # (autocommit) transaction: ``search`` is an init plan of the ORDER BY key, which the executor
            # evaluates before the index scan starts.
            f"WITH search AS (SELECT CAST(:q AS vector({dims})) AS q, "
            "set_config('hnsw.ef_search', :ef, true) AS ef, "
            "set_config('hnsw.iterative_scan', 'relaxed_order', true) AS scan) "
            f"SELECT data_id, 1 - {distance} AS score FROM data_indexes "
            f"WHERE dims = {dims} AND embedding IS NOT NULL AND {where} ORDER BY {distance} LIMIT :k"
        )
        others_sql = f"SELECT 1 FROM data_indexes WHERE dims <> {dims} AND {where} LIMIT 1"
        k = limit  # the recall pool; with one index row per chunk that many rows fill it
        while True:
            params.update({"k": k, "ef": str(_hnsw_ef_search(k))})
            rows = await self._postgres_rows(sql, params)
            hits = _best_per_data([str(r[0]) for r in rows], [float(r[1]) for r in rows], limit)
            if len(rows) < k or len(hits) >= limit or k >= HNSW_MAX_ROWS:
                break
            # chunks with several index rows took places: ask again, for enough more rows
            k = min(HNSW_MAX_ROWS, -(-k * limit * 5 // (4 * max(1, len(hits)))))
        # vectors of another size can only hide behind a short answer; a full one needs no scan
        if len(rows) < k and await self.db.read(others_sql, params):
            raise VectorDimensionMismatch(
                f"the datasets searched hold vectors that are not {dims}-dimensional: "
                "search them with the embedding model they were built with"
            )
        return hits
