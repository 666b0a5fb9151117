"""The candidate counts of both legs: the vector leg fills its pool of chunks even when chunks hold several
index rows, and the full-text leg's ranked candidates (PostgreSQL ranks ``_rank_pool`` rows, not every
match) keep the rows with more of the query's words on top, as ranking every match does."""

from __future__ import annotations

import random

from fathom.knowledge.ports import SearchScope, TextRecord
from fathom.knowledge.tokenize import segment_for_index
from fathom.store.db import Database
from fathom.store.knowledge import SqlChunkRepository, SqlDatasetRepository, SqlFullTextIndex, SqlVectorIndex
from fathom.store.knowledge.fulltext import _rank_pool
from fathom.store.protocols import ChunkToWrite
from fathom.store.repositories import SqlTeamRepository

DIMS = 8


async def _dataset(db: Database) -> tuple[str, str, str]:
    team = await SqlTeamRepository(db).create_team("T")
    datasets = SqlDatasetRepository(db)
    dataset = await datasets.create_dataset(team.id, "KB", vector_model="test-model")
    collection = await datasets.create_collection(team.id, dataset.id, "c", type="virtual")
    return team.id, dataset.id, collection.id


def _near(base: list[float], rng: random.Random, spread: float) -> list[float]:
    return [x + rng.uniform(-spread, spread) for x in base]


async def test_vector_search_fills_the_pool_when_chunks_have_several_index_rows(database: Database) -> None:
    team_id, dataset_id, collection_id = await _dataset(database)
    rng = random.Random(5)
    bases = [[rng.uniform(-1, 1) for _ in range(DIMS)] for _ in range(40)]
    writes = [  # three index rows per chunk, close to each other: a chunk's rows crowd the nearest rows
        ChunkToWrite(
            q=f"chunk {i}",
            a="",
            chunk_index=i,
            index_texts=[f"part {j}" for j in range(3)],
            vectors=[_near(base, rng, 0.01) for _ in range(3)],
        )
        for i, base in enumerate(bases)
    ]
    await SqlChunkRepository(database, segment_for_index).write_chunks(
        team_id, dataset_id, collection_id, writes, model="test-model"
    )
    scope = SearchScope(dataset_ids={dataset_id})
    query = _near(bases[0], rng, 0.3)
    hits = await SqlVectorIndex(database).search(query, 20, scope)
    assert len(hits) == 20 and len({d for d, _ in hits}) == 20
    assert hits == await SqlVectorIndex(database, exact=True).search(query, 20, scope)


async def test_a_row_with_two_query_words_outranks_more_rows_with_one_than_are_ranked(
    database: Database,
) -> None:
    _, dataset_id, collection_id = await _dataset(database)
    index = SqlFullTextIndex(database, segment_for_index)
    limit = 5
    one_word = _rank_pool(limit) + 50  # more one-word matches than PostgreSQL ranks
    records = [
        TextRecord(f"{i:024d}", dataset_id, collection_id, f"alpha filler{i}") for i in range(one_word)
    ]
    # the two-word rows are written last: they are not among the first rows the index finds
    records += [
        TextRecord(f"{one_word:024d}", dataset_id, collection_id, "alpha beta"),
        TextRecord(f"{one_word + 1:024d}", dataset_id, collection_id, "beta gamma alpha"),
    ]
    await index.add(records)
    scope = SearchScope(dataset_ids={dataset_id})
    hits = await index.search("alpha beta gamma", limit, scope)
    assert [d for d, _ in hits[:2]] == [f"{one_word + 1:024d}", f"{one_word:024d}"]
    exact = await SqlFullTextIndex(database, segment_for_index, exact=True).search(
        "alpha beta gamma", limit, scope
    )
    assert hits[:2] == exact[:2]
    assert [score for _, score in hits] == [score for _, score in exact]  # the rest tie: one word each
