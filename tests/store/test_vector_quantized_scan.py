"""The in-memory vector search's int8 scan (SIMD dot products over a quantized copy, then float32
rescoring of the best candidates) returns what the exact float32 scan returns: same chunks, same order,
scores equal to float precision, also under a collection filter."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fathom.knowledge.ports import SearchScope
from fathom.store import migrate
from fathom.store.db import Database
from fathom.store.knowledge import SqlChunkRepository, SqlDatasetRepository, SqlVectorIndex
from fathom.store.knowledge.vectors import _best, _quantize, simsimd
from fathom.store.protocols import ChunkToWrite
from fathom.store.repositories import SqlTeamRepository

DIMS = 48


def test_quantize_maps_the_largest_component_to_127_and_keeps_signs() -> None:
    vectors = np.array([[0.5, -0.25, 0.0], [-0.1, 0.05, 0.2]], dtype=np.float32)
    assert _quantize(vectors).tolist() == [[127, -64, 0], [-25, 13, 51]]
    assert _quantize(np.zeros((1, 3), dtype=np.float32)).tolist() == [[0, 0, 0]]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(st.integers(-40, 40).map(float), st.just(-np.inf)),  # ties, as int8 scores have
        min_size=1,
        max_size=400,
    ),
    st.integers(0, 420),
)
def test_best_picks_the_highest_finite_scores_whether_or_not_a_sample_threshold_goes_first(
    values: list[float], take: int
) -> None:
    scores = np.array(values, dtype=np.float32)
    chosen = _best(scores, take)
    assert len(set(chosen.tolist())) == len(chosen)
    finite = np.sort(scores[np.isfinite(scores)])[::-1]
    wanted = finite[: take if 0 < take < len(scores) else len(scores)]
    assert np.sort(scores[chosen])[::-1].tolist() == wanted.tolist()


def test_best_over_a_large_array_returns_the_same_positions_as_a_full_partition() -> None:
    scores = np.random.default_rng(5).standard_normal(100_000).astype(np.float32)  # no ties
    for take in (1, 40, 400, 1600, 12_000):
        expected = np.argpartition(-scores, take - 1)[:take]
        assert set(_best(scores, take).tolist()) == set(expected.tolist())


@pytest.mark.skipif(simsimd is None, reason="simsimd has no wheel for this platform: the int8 scan is off")
async def test_int8_scan_returns_the_exact_scans_results(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path}/vectors.db")
    try:
        await migrate.upgrade(db)
        team = await SqlTeamRepository(db).create_team("T")
        datasets = SqlDatasetRepository(db)
        dataset = await datasets.create_dataset(team.id, "KB", vector_model="m")
        collections = [
            (await datasets.create_collection(team.id, dataset.id, f"c{i}", type="virtual")).id
            for i in range(2)
        ]
        rng = np.random.default_rng(3)
        # clustered vectors, like real embeddings: many near ties for the quantization to get wrong
        centres = rng.standard_normal((20, DIMS))
        rows = centres[rng.integers(0, 20, 3000)] + 0.35 * rng.standard_normal((3000, DIMS))
        repository = SqlChunkRepository(db)
        for i, collection_id in enumerate(collections):
            part = rows[i::2]
            await repository.write_chunks(
                team.id,
                dataset.id,
                collection_id,
                [
                    ChunkToWrite(f"chunk {n}", "", n, ["x"], [vector.tolist()])
                    for n, vector in enumerate(part)
                ],
                model="m",
            )
        exact, quantized = (
            SqlVectorIndex(db, quantized_min_rows=10**9),
            SqlVectorIndex(db, quantized_min_rows=0),
        )
        scopes = [
            SearchScope(dataset_ids=frozenset({dataset.id})),
            SearchScope(dataset_ids=frozenset({dataset.id}), collection_ids=frozenset({collections[1]})),
        ]
        for query in centres[:10] + 0.2 * rng.standard_normal((10, DIMS)):
            for scope in scopes:
                expected = await exact.search(query.tolist(), 60, scope)
                found = await quantized.search(query.tolist(), 60, scope)
                assert [d for d, _ in found] == [d for d, _ in expected]
                assert np.allclose([s for _, s in found], [s for _, s in expected], atol=1e-5)
    finally:
        await db.close()


async def test_the_read_path_sees_committed_writes_at_once(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path}/read.db")
    try:
        await migrate.upgrade(db)
        team = await SqlTeamRepository(db).create_team("T")
        datasets = SqlDatasetRepository(db)
        dataset = await datasets.create_dataset(team.id, "KB", vector_model="m")
        assert (await datasets.search_facts(team.id, [dataset.id])).models == {dataset.id: "m"}
        await datasets.update_dataset(team.id, dataset.id, vector_model="m2")
        assert (await datasets.search_facts(team.id, [dataset.id])).models == {dataset.id: "m2"}
        rows = await db.read("SELECT count(*) FROM datasets WHERE team_id = :t", {"t": team.id})
        assert rows[0][0] == 1
        with pytest.raises(Exception, match="readonly|read-only"):
            await db.read("DELETE FROM datasets")
    finally:
        await db.close()


async def test_rows_written_after_a_load_are_appended_and_deletes_reload(tmp_path: Path) -> None:
    db = Database(f"sqlite:///{tmp_path}/append.db")
    try:
        await migrate.upgrade(db)
        team = await SqlTeamRepository(db).create_team("T")
        datasets = SqlDatasetRepository(db)
        dataset = await datasets.create_dataset(team.id, "KB", vector_model="m")
        collection = await datasets.create_collection(team.id, dataset.id, "c", type="virtual")
        repository = SqlChunkRepository(db)
        rng = np.random.default_rng(5)

        async def write(count: int, start: int) -> list[str]:
            rows = rng.standard_normal((count, DIMS))
            chunks = [
                ChunkToWrite(f"c{start + n}", "", start + n, ["x"], [vector.tolist()])
                for n, vector in enumerate(rows)
            ]
            return await repository.write_chunks(team.id, dataset.id, collection.id, chunks, model="m")

        scope = SearchScope(dataset_ids=frozenset({dataset.id}))
        queries = rng.standard_normal((5, DIMS)).tolist()
        # the int8 copy appears when appended rows cross the threshold (300 + 60 >= 320)
        index = SqlVectorIndex(db, quantized_min_rows=320)
        ids = await write(300, 0)
        await index.search(queries[0], 10, scope)
        assert (index.full_loads, index.appends) == (1, 0)
        ids += await write(60, 300)
        for query in queries:  # same answers as a fresh exact index that loads everything
            fresh = SqlVectorIndex(db, quantized_min_rows=10**9)
            found, expected = await index.search(query, 50, scope), await fresh.search(query, 50, scope)
            assert [d for d, _ in found] == [d for d, _ in expected]
            assert np.allclose([v for _, v in found], [v for _, v in expected], atol=1e-5)
        assert (index.full_loads, index.appends) == (1, 1)
        assert index._matrices[dataset.id].quantized is not None
        await repository.delete_chunk(team.id, ids[7])
        found = await index.search(queries[0], 400, scope)
        assert index.full_loads == 2 and ids[7] not in {d for d, _ in found} and len(found) == 359
    finally:
        await db.close()
