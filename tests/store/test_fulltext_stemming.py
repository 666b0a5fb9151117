"""English stemming and stop words in the full-text index (migration 0003), on both backends: words match
across inflections, stop words never decide a match, and rows written before the migration are kept and
found the new way."""

from __future__ import annotations

import os
from itertools import count
from pathlib import Path

import pytest
from sqlalchemy import text

from fathom.knowledge.ports import SearchScope, TextRecord
from fathom.knowledge.tokenize import segment_for_index
from fathom.store import migrate
from fathom.store.db import Database
from fathom.store.knowledge import SqlFullTextIndex
from fathom.store.pg_embedded import EmbeddedPostgres

_DS = "d" * 24
_SCOPE = SearchScope(dataset_ids=frozenset({_DS}))
_names = count()

TEXTS = {
    "t1": "Vitamin D deficiency studies in elderly patients",
    "t2": "The patient was studying the effects of running",
    "t3": "知识库检索需要中文分词",
    "t4": "Weather report",
}


async def _index(db: Database) -> SqlFullTextIndex:
    index = SqlFullTextIndex(db, segment_for_index)
    await index.add([TextRecord(d, _DS, "c1", body) for d, body in TEXTS.items()])
    return index


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("study", {"t1", "t2"}),  # studies / studying
        ("patients", {"t1", "t2"}),  # patients / patient
        ("runs", {"t2"}),  # running
        ("the and of", set()),  # stop words alone match nothing
        ("the weather", {"t4"}),  # a stop word does not widen the match
        ("中文分词", {"t3"}),  # Chinese words are untouched by the English stemmer
    ],
)
async def test_fulltext_matches_english_inflections_and_ignores_stop_words(
    database: Database, query: str, expected: set[str]
) -> None:
    index = await _index(database)
    assert {d for d, _ in await index.search(query, 10, _SCOPE)} == expected


async def test_fulltext_delete_by_chunk_and_collection_removes_the_rows(database: Database) -> None:
    index = await _index(database)
    await index.add([TextRecord("t5", _DS, "c2", "another study")])
    assert await index.delete(data_ids={"t1"}) == 1
    assert {d for d, _ in await index.search("study", 10, _SCOPE)} == {"t2", "t5"}
    assert await index.delete(collection_ids={"c2"}) == 1
    assert {d for d, _ in await index.search("study", 10, _SCOPE)} == {"t2"}
    # re-adding a chunk replaces its row instead of duplicating it
    await index.add([TextRecord("t2", _DS, "c1", "studies again"), TextRecord("t2", _DS, "c1", "study")])
    assert [d for d, _ in await index.search("study", 10, _SCOPE)] == ["t2"]


async def _database_at_0002(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Database:
    if backend == "sqlite":
        db = Database(f"sqlite:///{tmp_path / 'old.db'}")
    else:
        server: EmbeddedPostgres = request.getfixturevalue("postgres_server")
        db = Database(server.create_database(f"stem_{os.getpid()}_{next(_names)}"))
    await migrate.upgrade(db, "0002")
    return db


async def test_rows_written_before_the_stemming_migration_are_kept_and_stemmed(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    db = await _database_at_0002(backend, tmp_path, request)
    try:
        async with db.transaction() as session:  # what version 0002's code wrote
            for data_id, body in TEXTS.items():
                params = {"d": data_id, "ds": _DS, "c": "c1", "t": segment_for_index(body)}
                if db.is_postgres:
                    sql = (
                        "INSERT INTO data_fts (data_id, dataset_id, collection_id, tsv) "
                        "VALUES (:d, :ds, :c, to_tsvector('simple', :t))"
                    )
                else:
                    sql = (
                        "INSERT INTO data_fts (text, data_id, dataset_id, collection_id) "
                        "VALUES (:t, :d, :ds, :c)"
                    )
                await session.execute(text(sql), params)
        assert await migrate.upgrade(db) == migrate.head_revision()
        index = SqlFullTextIndex(db, segment_for_index)
        assert {d for d, _ in await index.search("study", 10, _SCOPE)} == {"t1", "t2"}
        assert {d for d, _ in await index.search("中文分词", 10, _SCOPE)} == {"t3"}
        assert await index.delete(collection_ids={"c1"}) == len(TEXTS)
        assert await index.search("weather", 10, _SCOPE) == []
    finally:
        await db.close()
