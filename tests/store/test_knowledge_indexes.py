"""Index backend conformance: SQLite (FTS5 + numpy) and PostgreSQL (tsvector + pgvector) against the
in-memory reference indexes of ``fathom.knowledge.memory_index``, fed the same chunks."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import pytest
import snowballstemmer

from fathom.knowledge.memory_index import MemoryFullTextIndex, MemoryVectorIndex
from fathom.knowledge.ports import SearchScope, TextRecord, VectorRecord
from fathom.knowledge.tokenize import segment, segment_for_index
from fathom.store.db import Database
from fathom.store.knowledge import SqlChunkRepository, SqlDatasetRepository, SqlFullTextIndex, SqlVectorIndex
from fathom.store.knowledge.fulltext import STOP_WORDS
from fathom.store.knowledge.vectors import VectorDimensionMismatch
from fathom.store.protocols import ChunkToWrite, NotFound
from fathom.store.repositories import SqlTeamRepository

DIMS = 16
TEXTS = [
    "Apples and bananas are rich in potassium and fibre.",
    "The banana harvest in Ecuador fell after heavy rain.",
    "Kubernetes schedules pods onto nodes in a cluster.",
    "A cluster of stars formed near the galactic core.",
    "知识库问答系统使用向量检索和全文检索。",
    "全文检索需要先对中文进行分词。",
    "Potassium helps muscles contract; bananas supply it.",
    "Rain and wind delayed the apple harvest in Normandy.",
]


_STEMMER = snowballstemmer.stemmer("english")


def _stemmed_words(text: str) -> list[str]:
    """What both backends index: segmented words, English ones stemmed (FTS5 porter / PostgreSQL english),
    stop words left out (PostgreSQL drops them when indexing, both drop them from queries)."""
    return [_STEMMER.stemWord(word) for word in segment(text) if word not in STOP_WORDS]


def _vector(seed: int) -> list[float]:
    rng = random.Random(seed)
    return [rng.uniform(-1, 1) for _ in range(DIMS)]


@dataclass
class Corpus:
    dataset_id: str
    collections: list[str]
    data_ids: list[str]
    fulltext: SqlFullTextIndex
    vectors: SqlVectorIndex
    chunks: SqlChunkRepository
    datasets: SqlDatasetRepository
    team_id: str
    memory_text: MemoryFullTextIndex
    memory_vectors: MemoryVectorIndex


async def _corpus(db: Database) -> Corpus:
    team = await SqlTeamRepository(db).create_team("T")
    datasets = SqlDatasetRepository(db)
    dataset = await datasets.create_dataset(team.id, "KB", vector_model="test-model")
    collections = [
        (await datasets.create_collection(team.id, dataset.id, f"c{i}", type="virtual")).id for i in range(2)
    ]
    chunks = SqlChunkRepository(db, segment_for_index)
    memory_text, memory_vectors = MemoryFullTextIndex(tokenizer=_stemmed_words), MemoryVectorIndex()
    data_ids: list[str] = []
    for i, body in enumerate(TEXTS):
        collection_id = collections[i % 2]
        written = await chunks.write_chunks(
            team.id,
            dataset.id,
            collection_id,
            [ChunkToWrite(q=body, a="", chunk_index=i, index_texts=[body], vectors=[_vector(i)])],
            model="test-model",
        )
        data_ids.extend(written)
        await memory_text.add([TextRecord(written[0], dataset.id, collection_id, f"{body}\n")])
        await memory_vectors.add([VectorRecord(f"v{i}", written[0], dataset.id, collection_id, _vector(i))])
    return Corpus(
        dataset.id,
        collections,
        data_ids,
        SqlFullTextIndex(db, segment_for_index),
        SqlVectorIndex(db),
        chunks,
        datasets,
        team.id,
        memory_text,
        memory_vectors,
    )


@pytest.mark.parametrize("query", ["banana potassium", "harvest rain", "cluster", "中文分词", "检索"])
async def test_fulltext_returns_the_same_chunks_as_the_reference_bm25(database: Database, query: str) -> None:
    corpus = await _corpus(database)
    scope = SearchScope(dataset_ids={corpus.dataset_id})
    ours = await corpus.fulltext.search(query, 10, scope)
    reference = await corpus.memory_text.search(query, 10, scope)
    assert {d for d, _ in ours} == {d for d, _ in reference}
    assert ours, "every query matches something"
    clear_winner = len(reference) == 1 or reference[0][1] > 1.1 * reference[1][1]
    if database.dialect == "sqlite" and clear_winner:  # FTS5's bm25 agrees with the reference BM25
        assert ours[0][0] == reference[0][0]
    assert all(a[1] >= b[1] for a, b in zip(ours, ours[1:], strict=False))


async def test_fulltext_respects_scope_and_exclusions(database: Database) -> None:
    corpus = await _corpus(database)
    only_first = SearchScope(dataset_ids={corpus.dataset_id}, collection_ids={corpus.collections[0]})
    excluded = SearchScope(dataset_ids={corpus.dataset_id}, exclude_collection_ids={corpus.collections[0]})
    first_ids = set(corpus.data_ids[0::2])
    assert {d for d, _ in await corpus.fulltext.search("harvest banana cluster", 10, only_first)} <= first_ids
    assert (
        not {d for d, _ in await corpus.fulltext.search("harvest banana cluster", 10, excluded)} & first_ids
    )
    assert await corpus.fulltext.search("harvest", 10, SearchScope(dataset_ids={"0" * 24})) == []
    everything = SearchScope(dataset_ids={corpus.dataset_id})
    assert await corpus.fulltext.search("'\" * ( ) : ^ -", 10, everything) == []
    # query syntax of FTS5 / tsquery is never interpreted: these are plain words
    assert [d for d, _ in await corpus.fulltext.search('near" OR "(', 10, everything)] == [corpus.data_ids[3]]


async def test_vector_search_matches_exact_cosine(database: Database) -> None:
    corpus = await _corpus(database)
    scope = SearchScope(dataset_ids={corpus.dataset_id})
    query = _vector(3)
    ours = await corpus.vectors.search(query, 5, scope)
    reference = await corpus.memory_vectors.search(query, 5, scope)
    assert [d for d, _ in ours] == [d for d, _ in reference]
    for (_, a), (_, b) in zip(ours, reference, strict=True):
        assert math.isclose(a, b, abs_tol=1e-5)
    assert ours[0] == (corpus.data_ids[3], pytest.approx(1.0, abs=1e-5))


async def test_vector_search_respects_collection_scope(database: Database) -> None:
    corpus = await _corpus(database)
    scope = SearchScope(dataset_ids={corpus.dataset_id}, exclude_collection_ids={corpus.collections[1]})
    hits = await corpus.vectors.search(_vector(3), 8, scope)
    assert hits and {d for d, _ in hits} <= set(corpus.data_ids[0::2])


async def test_a_query_from_another_model_is_an_error(database: Database) -> None:
    corpus = await _corpus(database)
    with pytest.raises(VectorDimensionMismatch, match="embedding model"):
        await corpus.vectors.search([0.1] * (DIMS + 1), 5, SearchScope(dataset_ids={corpus.dataset_id}))


async def test_deleting_a_collection_removes_it_from_both_indexes(database: Database) -> None:
    corpus = await _corpus(database)
    scope = SearchScope(dataset_ids={corpus.dataset_id})
    assert await corpus.vectors.search(_vector(0), 8, scope)  # warm the in-memory matrix
    await corpus.datasets.delete_collections(corpus.team_id, [corpus.collections[0]])
    gone = set(corpus.data_ids[0::2])
    assert not {d for d, _ in await corpus.vectors.search(_vector(0), 8, scope)} & gone
    assert not {d for d, _ in await corpus.fulltext.search("banana harvest cluster 检索", 8, scope)} & gone
    assert not set(await corpus.chunks.get_many(list(gone)))


async def test_deleting_a_chunk_removes_it_from_both_indexes(database: Database) -> None:
    corpus = await _corpus(database)
    scope = SearchScope(dataset_ids={corpus.dataset_id})
    target = corpus.data_ids[1]
    await corpus.chunks.delete_chunk(corpus.team_id, target)
    assert target not in {d for d, _ in await corpus.fulltext.search("banana harvest", 8, scope)}
    assert target not in {d for d, _ in await corpus.vectors.search(_vector(1), 8, scope)}


async def test_a_second_process_sees_new_vectors(database: Database) -> None:
    corpus = await _corpus(database)
    other_db = Database(database.url)
    try:
        other = SqlVectorIndex(other_db)
        scope = SearchScope(dataset_ids={corpus.dataset_id})
        before = await other.search(_vector(99), 3, scope)
        new_ids = await corpus.chunks.write_chunks(
            corpus.team_id,
            corpus.dataset_id,
            corpus.collections[0],
            [ChunkToWrite(q="new", a="", chunk_index=99, index_texts=["new"], vectors=[_vector(99)])],
            model="test-model",
        )
        after = await other.search(_vector(99), 3, scope)
    finally:
        await other_db.close()
    assert before[0][0] != new_ids[0] and after[0][0] == new_ids[0]


async def test_a_failing_batch_writes_nothing(database: Database) -> None:
    corpus = await _corpus(database)
    good = ChunkToWrite(q="good", a="", chunk_index=50, index_texts=["good"], vectors=[_vector(50)])
    bad = ChunkToWrite(q="bad", a="", chunk_index=51, index_texts=["bad", "extra"], vectors=[_vector(51)])
    with pytest.raises(ValueError, match="2 index texts but 1 vectors"):
        await corpus.chunks.write_chunks(
            corpus.team_id, corpus.dataset_id, corpus.collections[0], [good, bad], model="test-model"
        )
    rows, total = await corpus.chunks.list_chunks(corpus.team_id, corpus.collections[0])
    assert total == 4 and "good" not in [r.q for r in rows]
    collection = await corpus.datasets.get_collection(corpus.team_id, corpus.collections[0])
    assert collection.chunks_done == 4
    assert await corpus.fulltext.search("good", 5, SearchScope(dataset_ids={corpus.dataset_id})) == []


async def test_chunk_rows_carry_source_and_indexes(database: Database) -> None:
    corpus = await _corpus(database)
    rows = await corpus.chunks.get_many(corpus.data_ids[:2])
    first = rows[corpus.data_ids[0]]
    assert first.q == TEXTS[0] and first.source_name == "c0" and first.indexes[0]["text"] == TEXTS[0]


async def test_chunk_rows_carry_every_current_index_and_no_staged_one(database: Database) -> None:
    corpus = await _corpus(database)
    several, staged_only = corpus.data_ids[0], corpus.data_ids[1]
    await corpus.chunks.update_chunk(
        corpus.team_id,
        several,
        q=TEXTS[0],
        a="answer",
        index_texts=[TEXTS[0], "custom index"],
        vectors=[_vector(0), _vector(100)],
        model="test-model",
        tokens=7,
    )
    await corpus.chunks.update_chunk(  # its only index rows belong to a model the dataset does not use
        corpus.team_id, staged_only, q=TEXTS[1], a="", index_texts=[TEXTS[1]], vectors=[_vector(1)], model="m"
    )
    rows = await corpus.chunks.get_many([several, staged_only, several, "0" * 24])
    assert set(rows) == {several, staged_only}
    first = rows[several]
    assert (first.a, first.tokens, first.source_name) == ("answer", 7, "c0")
    assert sorted(entry["text"] for entry in first.indexes) == sorted([TEXTS[0], "custom index"])
    assert all(entry["type"] == "default" and entry["dataId"] for entry in first.indexes)
    assert rows[staged_only].indexes == [] and rows[staged_only].q == TEXTS[1]


async def test_indexing_progress_counts_collections_not_yet_searchable_and_leaves_forbidden_ones_out(
    database: Database,
) -> None:
    c = await _corpus(database)
    assert (await c.datasets.search_facts(c.team_id, [c.dataset_id])).indexing == [(c.dataset_id, "KB", 2, 2)]
    await c.datasets.update_collection(c.team_id, c.collections[0], forbid=True)
    assert (await c.datasets.search_facts(c.team_id, [c.dataset_id])).indexing == [(c.dataset_id, "KB", 1, 1)]
    other = await SqlTeamRepository(database).create_team("Other")
    with pytest.raises(NotFound):  # another team's dataset
        await c.datasets.search_facts(other.id, [c.dataset_id])
    assert (await c.datasets.search_facts(c.team_id, [])).indexing == []


async def test_search_facts_read_the_models_forbidden_collections_and_indexing_state_in_one_read(
    database: Database,
) -> None:
    c = await _corpus(database)
    await c.datasets.update_collection(c.team_id, c.collections[0], forbid=True)
    calls: list[int] = []
    read_many = database.read_many

    async def counted(statements):  # type: ignore[no-untyped-def]
        calls.append(len(statements))
        return await read_many(statements)

    database.read_many = counted  # type: ignore[method-assign]
    facts = await c.datasets.search_facts(c.team_id, [c.dataset_id, c.dataset_id])
    assert calls == [3]
    assert facts.models == {c.dataset_id: "test-model"}
    assert facts.forbidden == [c.collections[0]]
    assert facts.indexing == [(c.dataset_id, "KB", 1, 1)]
    other = await SqlTeamRepository(database).create_team("Other")
    with pytest.raises(NotFound, match=f"dataset {c.dataset_id} not found"):
        await c.datasets.search_facts(other.id, [c.dataset_id])
    empty = await c.datasets.search_facts(c.team_id, [])
    assert (empty.models, empty.forbidden, empty.indexing) == ({}, [], [])
