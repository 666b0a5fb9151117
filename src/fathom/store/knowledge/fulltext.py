"""Full-text search: SQLite FTS5 ranked by ``bm25()``, PostgreSQL ``tsvector`` ranked by ``ts_rank``.

Text is segmented by the injected ``segment`` function (jieba for Chinese) before indexing and before
querying, so both backends see whitespace-separated lower-case words. Query words are OR-ed.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from sqlalchemy import text

from fathom.store.db import Database
from fathom.store.knowledge.scope import ScopeLike, TextRecordLike, scope_clauses

Hit = tuple[str, float]


def _plain(value: str) -> str:
    return value.lower()


class SqlFullTextIndex:
    def __init__(self, db: Database, segment: Callable[[str], str] = _plain) -> None:
        self.db = db
        self.segment = segment

    async def add(self, records: Sequence[TextRecordLike]) -> None:
        async with self.db.transaction() as session:
            for record in records:
                params = {
                    "d": record.data_id,
                    "ds": record.dataset_id,
                    "c": record.collection_id,
                    "t": self.segment(record.text),
                }
                await session.execute(text("DELETE FROM data_fts WHERE data_id = :d"), {"d": record.data_id})
                if self.db.is_postgres:
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

    async def delete(
        self, *, data_ids: Collection[str] | None = None, collection_ids: Collection[str] | None = None
    ) -> int:
        removed = 0
        async with self.db.transaction() as session:
            for data_id in data_ids or ():
                result = await session.execute(
                    text("DELETE FROM data_fts WHERE data_id = :d"), {"d": data_id}
                )
                removed += result.rowcount  # type: ignore[attr-defined]
            for collection_id in collection_ids or ():
                result = await session.execute(
                    text("DELETE FROM data_fts WHERE collection_id = :c"), {"c": collection_id}
                )
                removed += result.rowcount  # type: ignore[attr-defined]
        return removed

    async def search(self, query: str, limit: int, scope: ScopeLike) -> list[Hit]:
        words = list(dict.fromkeys(self.segment(query).split()))
        if not words or limit <= 0 or not scope.dataset_ids:
            return []
        where, params = scope_clauses(scope, "data_fts")
        params["limit"] = limit
        if self.db.is_postgres:
            params["q"] = " | ".join(
                "'" + word.replace("'", "''").replace("\\", "\\\\") + "'" for word in words
            )
            sql = (
                "SELECT data_id, ts_rank(tsv, query) AS score FROM data_fts, to_tsquery('simple', :q) query "
                f"WHERE tsv @@ query AND {where} ORDER BY score DESC, data_id LIMIT :limit"
            )
        else:
            params["q"] = " OR ".join('"' + word.replace('"', '""') + '"' for word in words)
            sql = (
                "SELECT data_id, -bm25(data_fts) AS score FROM data_fts "
                f"WHERE data_fts MATCH :q AND {where} ORDER BY bm25(data_fts), data_id LIMIT :limit"
            )
        async with self.db.engine.connect() as conn:
            rows = (await conn.execute(text(sql), params)).all()
        return [(str(row[0]), float(row[1])) for row in rows]
