"""Index rows (one vector per index text of a chunk): how every writer builds and inserts them.

A row holds the L2-normalised float32 vector as bytes; on PostgreSQL also a pgvector copy (column
``embedding``, added by migration 0002 outside the models) under a per-dimension HNSW index created on
first use. Chunk writes, chunk edits, re-embedding and ``SqlVectorIndex.add`` all go through here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sqlalchemy import insert, text
from sqlalchemy.ext.asyncio import AsyncSession

from fathom.store.models import DataIndex, new_id


def normalised_vector(vector: Sequence[float]) -> np.ndarray:
    array = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(array))
    return array / norm if norm > 0 else array


_SEVEN_DIGITS = "{:.7g}".format


def pgvector_literal(array: np.ndarray) -> str:
    """pgvector's text form, seven significant digits a component (``tolist`` gives Python floats at once:
    cheaper than converting each numpy scalar)."""
    return "[" + ",".join(map(_SEVEN_DIGITS, np.asarray(array).tolist())) + "]"


async def ensure_hnsw_index(session: AsyncSession, dims: int) -> None:
    """PostgreSQL: an HNSW (cosine) index for vectors of this dimension, created on first use.

    ``CREATE INDEX IF NOT EXISTS`` alone is not safe between two transactions: the second does not see the
    first's uncommitted index and fails on the catalog's unique key once the first commits (two workers
    ingesting a new dimension at once). So a missing index is created under a transaction-scoped advisory
    lock of its own, after a second look; an existing one (every later write) costs one catalog read."""
    name = f"ix_data_indexes_hnsw_{dims}"
    exists = text("SELECT to_regclass(:name) IS NOT NULL")
    if (await session.execute(exists, {"name": name})).scalar():
        return
    await session.execute(text("SELECT pg_advisory_xact_lock(hashtext(:name))"), {"name": name})
    if (await session.execute(exists, {"name": name})).scalar():
        return  # another transaction made it while this one waited for the lock
    await session.execute(
        text(
            f"CREATE INDEX IF NOT EXISTS {name} ON data_indexes "
            f"USING hnsw ((embedding::vector({dims})) vector_cosine_ops) WHERE dims = {dims}"
        )
    )


def index_row(
    *,
    team_id: str,
    dataset_id: str,
    collection_id: str,
    data_id: str,
    text: str,
    model: str,
    vector: Sequence[float],
    is_postgres: bool,
    type_: str = "default",
    index_id: str | None = None,
) -> dict[str, Any]:
    """The column values of one index row (``embedding``: the pgvector literal on PostgreSQL, else None)."""
    array = normalised_vector(vector)
    return {
        "id": index_id or new_id(),
        "team_id": team_id,
        "dataset_id": dataset_id,
        "collection_id": collection_id,
        "data_id": data_id,
        "type": type_,
        "text": text,
        "model": model,
        "dims": int(array.shape[0]),
        "vector": array.astype("<f4").tobytes(),
        "embedding": pgvector_literal(array) if is_postgres else None,
    }


async def insert_index_rows(
    session: AsyncSession, is_postgres: bool, rows: Sequence[dict[str, Any]], hnsw_dims: set[int]
) -> None:
    """One multi-row insert of ``index_row`` values inside the caller's transaction. PostgreSQL: the HNSW
    index of each new dimension first (``hnsw_dims`` remembers the ones this writer already ensured)."""
    if not rows:
        return
    if not is_postgres:
        await session.execute(
            insert(DataIndex), [{k: v for k, v in r.items() if k != "embedding"} for r in rows]
        )
        return
    for dims in sorted({int(r["dims"]) for r in rows} - hnsw_dims):
        await ensure_hnsw_index(session, dims)
        hnsw_dims.add(dims)
    await session.execute(
        text(
            "INSERT INTO data_indexes (id, team_id, dataset_id, collection_id, data_id, type, text, "
            "model, dims, vector, embedding) VALUES (:id, :team_id, :dataset_id, :collection_id, "
            ":data_id, :type, :text, :model, :dims, :vector, CAST(:embedding AS vector))"
        ),
        list(rows),
    )
