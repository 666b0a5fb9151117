"""Full-text search: SQLite FTS5 ranked by ``bm25()``, PostgreSQL ``tsvector`` ranked by ``ts_rank``.

Text is segmented by the injected ``segment`` function (jieba for Chinese) before indexing and before
querying, so both backends see whitespace-separated lower-case words; English words are then stemmed by
the database (FTS5 ``porter`` tokenizer, PostgreSQL ``english`` configuration) and English stop words are
left out of queries. Query words are OR-ed.

PostgreSQL ranks candidates, not every match: ``ts_rank`` (no document frequency, no length
normalisation) gives each matched query lexeme between 0.061 and 0.1 (one occurrence to many), so a row
with two of the query's words outranks every row with one. A search therefore takes the rows matching two
or more words (a GIN query of word pairs), then rows matching one, up to ``_rank_pool(limit)`` rows
(4 × limit, at least 200), and ranks only those: the order is the exact one while the two-word rows fit
in the pool; past it, or among one-word rows, the rows ranked are the first the index finds, not the
best (one-word rows mostly tie: one occurrence each). Ranking every match read every matching heap row
(thousands for a common word). The recall of this against the exact ranking is measured in
``fathom.bench.search_recall``.

SQLite keeps the ids of each full-text row in the ordinary table ``data_fts_rows`` (its ``id`` is the FTS
rowid): searches join it to check the scope, deletes find rows through its indexes.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from itertools import combinations
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from fathom.store.db import Database
from fathom.store.knowledge.scope import ScopeLike, TextRecordLike, in_list, scope_clauses

Hit = tuple[str, float]
TS_CONFIG = "english"  # PostgreSQL text-search configuration: stemming and stop words

# The English stop words PostgreSQL's ``english`` configuration drops (Snowball's list), dropped from
# SQLite queries too so both backends match the same words.
STOP_WORDS = frozenset(
    """i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her
    hers herself it its itself they them their theirs themselves what which who whom this that these those
    am is are was were be been being have has had having do does did doing a an the and but if or because
    as until while of at by for with about against between into through during before after above below to
    from up down in out on off over under again further then once here there when where why how all any
    both each few more most other some such no nor not only own same so than too very s t can will just don
    should now""".split()  # noqa: SIM905 (127 words read better as a paragraph than as 127 lines)
)
_ID_BATCH = 500  # ids per IN (...) list
RANK_POOL_FACTOR, RANK_POOL_MIN = 4, 200  # PostgreSQL: candidates ranked per search (``_rank_pool``)
_PAIR_WORDS = 8  # the words whose pairs make the "two or more words" tier (8 words: 28 pairs)


def _plain(value: str) -> str:
    return value.lower()


async def write_fulltext_rows(
    session: AsyncSession, is_postgres: bool, rows: Sequence[Mapping[str, str]], *, replace: bool = False
) -> None:
    """Insert full-text rows ``{"d": data id, "ds": dataset id, "c": collection id, "t": segmented text}``
    inside the caller's transaction; ``replace`` first removes rows of the same data ids."""
    if replace:  # the last row of a data id wins
        rows = list({row["d"]: row for row in rows}.values())
    if not rows:
        return
    if is_postgres:
        conflict = " ON CONFLICT (data_id) DO UPDATE SET tsv = excluded.tsv" if replace else ""
        await session.execute(
            text(
                "INSERT INTO data_fts (data_id, dataset_id, collection_id, tsv) "
                f"VALUES (:d, :ds, :c, to_tsvector('{TS_CONFIG}', :t)){conflict}"
            ),
            list(rows),
        )
        return
    if replace:
        await delete_fulltext_rows(session, False, data_ids=[row["d"] for row in rows])
    await session.execute(
        text("INSERT INTO data_fts_rows (data_id, dataset_id, collection_id) VALUES (:d, :ds, :c)"),
        list(rows),
    )
    rowids: dict[str, int] = {}
    data_ids = [row["d"] for row in rows]
    for start in range(0, len(data_ids), _ID_BATCH):
        params: dict[str, Any] = {}
        marks = in_list("i", data_ids[start : start + _ID_BATCH], params)
        found = await session.execute(
            text(f"SELECT data_id, id FROM data_fts_rows WHERE data_id IN ({marks})"), params
        )
        rowids.update((str(data_id), int(rowid)) for data_id, rowid in found)
    await session.execute(
        text("INSERT INTO data_fts (rowid, text) VALUES (:r, :t)"),
        [{"r": rowids[row["d"]], "t": row["t"]} for row in rows],
    )


async def delete_fulltext_rows(
    session: AsyncSession,
    is_postgres: bool,
    *,
    data_ids: Collection[str] = (),
    collection_ids: Collection[str] = (),
) -> int:
    """Remove the full-text rows of these chunks and collections inside the caller's transaction."""
    removed = 0
    for column, values in (("data_id", list(data_ids)), ("collection_id", list(collection_ids))):
        for start in range(0, len(values), _ID_BATCH):
            params: dict[str, Any] = {}
            marks = in_list("i", values[start : start + _ID_BATCH], params)
            if is_postgres:
                result = await session.execute(
                    text(f"DELETE FROM data_fts WHERE {column} IN ({marks})"), params
                )
                removed += int(result.rowcount)  # type: ignore[attr-defined]
                continue
            selected = f"SELECT id FROM data_fts_rows WHERE {column} IN ({marks})"
            await session.execute(text(f"DELETE FROM data_fts WHERE rowid IN ({selected})"), params)
            result = await session.execute(
                text(f"DELETE FROM data_fts_rows WHERE {column} IN ({marks})"), params
            )
            removed += int(result.rowcount)  # type: ignore[attr-defined]
    return removed


def query_words(segmented: str) -> list[str]:
    """The distinct words of a segmented query, English stop words left out."""
    return [word for word in dict.fromkeys(segmented.split()) if word not in STOP_WORDS]


def _rank_pool(limit: int) -> int:
    """PostgreSQL: how many matching rows are ranked for a search of ``limit`` rows."""
    return max(RANK_POOL_MIN, RANK_POOL_FACTOR * limit)


class SqlFullTextIndex:
    """``exact``: on PostgreSQL rank every match instead of the candidates (to measure the candidates'
    recall; SQLite's FTS5 ranks every match either way)."""

    def __init__(self, db: Database, segment: Callable[[str], str] = _plain, *, exact: bool = False) -> None:
        self.db = db
        self.segment = segment
        self.exact = exact

    async def add(self, records: Sequence[TextRecordLike]) -> None:
        rows = [
            {"d": r.data_id, "ds": r.dataset_id, "c": r.collection_id, "t": self.segment(r.text)}
            for r in records
        ]
        async with self.db.transaction() as session:
            await write_fulltext_rows(session, self.db.is_postgres, rows, replace=True)

    async def delete(
        self, *, data_ids: Collection[str] | None = None, collection_ids: Collection[str] | None = None
    ) -> int:
        async with self.db.transaction() as session:
            return await delete_fulltext_rows(
                session, self.db.is_postgres, data_ids=data_ids or (), collection_ids=collection_ids or ()
            )

    def _postgres_query(
        self, words: Sequence[str], limit: int, scope: ScopeLike
    ) -> tuple[str, dict[str, Any]]:
        """The ``ts_rank`` statement: every match ranked when ``exact``, else ``_rank_pool(limit)``
        candidates, rows with two or more of the query's words first (see the module's docstring)."""
        where, params = scope_clauses(scope, "f")
        quoted = ["'" + word.replace("'", "''").replace("\\", "\\\\") + "'" for word in words]
        params.update({"q": " | ".join(quoted), "limit": limit, "pool": _rank_pool(limit)})
        query = f"to_tsquery('{TS_CONFIG}', :q) query"
        strong = f"to_tsquery('{TS_CONFIG}', :strong) strong"
        matches = f"SELECT f.data_id, f.tsv FROM data_fts f, {query} WHERE f.tsv @@ query AND {where}"
        if self.exact:
            candidates = matches
        elif len(quoted) < 2:
            candidates = f"{matches} LIMIT :pool"
        else:
            params["strong"] = " | ".join(f"{a} & {b}" for a, b in combinations(quoted[:_PAIR_WORDS], 2))
            candidates = (
                f"(SELECT f.data_id, f.tsv FROM data_fts f, {strong} WHERE f.tsv @@ strong AND {where} "
                "LIMIT :pool) UNION ALL "
                f"(SELECT f.data_id, f.tsv FROM data_fts f, {query}, {strong} "
                f"WHERE f.tsv @@ query AND NOT f.tsv @@ strong AND {where} LIMIT :pool) LIMIT :pool"
            )
        sql = (
            f"SELECT c.data_id, ts_rank(c.tsv, query) AS score FROM ({candidates}) c, {query} "
            "ORDER BY score DESC, c.data_id LIMIT :limit"
        )
        return sql, params

    async def search(self, query: str, limit: int, scope: ScopeLike) -> list[Hit]:
        words = query_words(self.segment(query))
        if not words or limit <= 0 or not scope.dataset_ids:
            return []
        params: dict[str, Any]
        if self.db.is_postgres:
            sql, params = self._postgres_query(words, limit, scope)
        else:
            # FTS5's own ``ORDER BY rank`` (bm25) path; the scope is checked on the narrow row table
            where, params = scope_clauses(scope, "r")
            params["q"] = " OR ".join('"' + word.replace('"', '""') + '"' for word in words)
            sql = (
                "SELECT r.data_id, -f.rank AS score FROM data_fts f CROSS JOIN data_fts_rows r "
                f"ON r.id = f.rowid WHERE data_fts MATCH :q AND {where} ORDER BY f.rank LIMIT :limit"
            )
            params["limit"] = limit
        rows = await self.db.read(sql, params)
        hits = [(str(row[0]), float(row[1])) for row in rows]
        hits.sort(key=lambda hit: (-hit[1], hit[0]))  # equal scores in a stable, backend-independent order
        return hits
