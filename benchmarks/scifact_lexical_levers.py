"""SciFact full-text levers (issue 20 item 4): pseudo-relevance feedback and title-aware index text.

Run: ``.venv/bin/python benchmarks/scifact_lexical_levers.py --split train [--dataset DIR] [--json]``

Builds, in memory, the same FTS5 index the product's full-text leg searches (each document
``title + " " + text`` plus the newline a pushed row's ``q + "\\n" + a`` adds, segmented by
``segment_for_index``, tokenizer ``porter unicode61 remove_diacritics 2``; the query is the product's
``query_words`` OR-ed as quoted phrases, ranked by ``bm25()``), so the baseline row reproduces
``fathom bench retrieval --mode fullTextRecall`` exactly (train 0.6909, test 0.6857), in seconds and
without embedding anything. Levers, each a variant of that leg:

* ``rm3``: RM3 (Lavrenko and Croft's relevance model mixed with the query, as Anserini does it): the
  top ``k`` first-pass hits' words (stop words, the query's own words, one-letter words and numbers left
  out) weighted by ``sum_d p(w|d) * p(d|q)`` (``p(d|q)`` the hit's share of the top-k BM25 scores,
  optionally times the word's idf), the top ``n`` kept; the second pass scores
  ``lam * query + (1 - lam) * expansion``. BM25 is a sum over the query's phrases and FTS5 adds a
  repeated phrase again, so the weighted query's score is the weighted sum of each phrase's own
  ``bm25()``, which is what this computes (one FTS5 query per distinct phrase, cached);
* ``title-fields``: title and abstract in two FTS5 columns, ``bm25(f, title weight, 1)``;
* ``title-repeat``: the title written ``r`` times before the abstract in the one column;
* ``query-split``: a query word FTS5 would read as a phrase (``break-induced``) searched as its parts.

``--lever NAME`` (repeatable) runs only those levers besides the baseline.

Cost per query is the process CPU time of the lever's own work per query (for RM3: the feedback terms
and the second FTS5 query, uncached).
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import re
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from fathom.bench.retrieval import ndcg_at_10, read_jsonl, read_qrels, recall_at_100  # noqa: E402
from fathom.knowledge.tokenize import segment, segment_for_index  # noqa: E402
from fathom.store.knowledge.fulltext import STOP_WORDS, query_words  # noqa: E402

TOKENIZER = "porter unicode61 remove_diacritics 2"  # migration 0003
NUMBER = re.compile(r"^[\d.]+$")
Ranker = Callable[[str], list[int]]


def _match(words: Sequence[str]) -> str:
    return " OR ".join('"' + word.replace('"', '""') + '"' for word in words)


class Corpus:
    def __init__(self, dataset: Path) -> None:
        self.docs = list(read_jsonl(dataset / "corpus.jsonl"))
        self.ids = [str(doc["_id"]) for doc in self.docs]
        self.texts = [f"{d.get('title', '')} {d.get('text', '')}".strip() + "\n" for d in self.docs]
        self.words = [segment(text) for text in self.texts]
        self.db = self._build([(segment_for_index(text),) for text in self.texts], ["text"])
        self._phrases: dict[str, dict[int, float]] = {}

    @staticmethod
    def _build(rows: Sequence[tuple[str, ...]], columns: Sequence[str]) -> sqlite3.Connection:
        db = sqlite3.connect(":memory:")
        db.execute(f"CREATE VIRTUAL TABLE f USING fts5({', '.join(columns)}, tokenize='{TOKENIZER}')")
        marks = ", ".join("?" for _ in range(len(columns) + 1))
        insert = f"INSERT INTO f (rowid, {', '.join(columns)}) VALUES ({marks})"
        db.executemany(insert, [(i, *row) for i, row in enumerate(rows)])
        return db

    def rank(
        self,
        words: Sequence[str],
        limit: int = 100,
        db: sqlite3.Connection | None = None,
        order: str = "rank",
    ) -> list[tuple[int, float]]:
        if not words:
            return []
        sql = f"SELECT rowid, -{order} FROM f WHERE f MATCH ? ORDER BY {order} LIMIT ?"
        return [(int(r), float(s)) for r, s in (db or self.db).execute(sql, (_match(words), limit))]

    def phrase(self, word: str) -> dict[int, float]:
        """``{doc: bm25 contribution}`` of one query phrase over every document it matches."""
        if word not in self._phrases:
            sql = "SELECT rowid, -bm25(f) FROM f WHERE f MATCH ?"
            self._phrases[word] = {int(r): float(s) for r, s in self.db.execute(sql, (_match([word]),))}
        return self._phrases[word]

    def weighted(self, terms: Sequence[tuple[str, float]], limit: int = 100) -> list[int]:
        scores: dict[int, float] = collections.defaultdict(float)
        for word, weight in terms:
            for doc, value in self.phrase(word).items():
                scores[doc] += weight * value
        return sorted(scores, key=lambda doc: (-scores[doc], doc))[:limit]


def expansion(
    corpus: Corpus, hits: Sequence[tuple[int, float]], query: Sequence[str], n: int, use_idf: bool
) -> list[tuple[str, float]]:
    """RM3's feedback terms: ``(word, weight)``, weights summing to 1."""
    total = sum(score for _, score in hits) or 1.0
    weights: dict[str, float] = collections.defaultdict(float)
    own = set(query)
    for doc, score in hits:
        words = corpus.words[doc]
        counts = collections.Counter(
            w for w in words if w not in STOP_WORDS and w not in own and len(w) > 1 and not NUMBER.match(w)
        )
        for word, tf in counts.items():
            weights[word] += (score / total) * tf / len(words)
    if use_idf:
        size = len(corpus.docs)
        for word in list(weights):
            df = len(corpus.phrase(word))
            weights[word] *= max(0.0, math.log((size - df + 0.5) / (df + 0.5)))
    kept = sorted(weights.items(), key=lambda item: -item[1])[:n]  # stable, as Counter.most_common
    norm = sum(v for _, v in kept) or 1.0
    return [(word, value / norm) for word, value in kept]


def rm3(corpus: Corpus, k: int, n: int, lam: float, use_idf: bool) -> Ranker:
    def ranker(text: str) -> list[int]:
        words = query_words(segment_for_index(text))
        hits = corpus.rank(words, k)
        if not hits:
            return []
        terms = [(w, lam / len(words)) for w in words]
        terms += [(w, (1 - lam) * v) for w, v in expansion(corpus, hits, words, n, use_idf)]
        return corpus.weighted(terms)

    return ranker


def column_ranker(corpus: Corpus, db: sqlite3.Connection, order: str) -> Ranker:
    """The product's query over the FTS5 table ``db``, ranked by ``order``."""

    def ranker(text: str) -> list[int]:
        return [doc for doc, _ in corpus.rank(query_words(segment_for_index(text)), db=db, order=order)]

    return ranker


def split_ranker(corpus: Corpus) -> Ranker:
    """The product's query with each word cut at the characters FTS5 separates on (``break-induced``
    becomes ``break`` OR ``induced`` instead of the phrase ``"break induced"``)."""

    def ranker(text: str) -> list[int]:
        words = query_words(segment_for_index(text))
        parts = [p for w in words for p in re.split(r"[^\w]+|_", w) if p and p not in STOP_WORDS]
        return [doc for doc, _ in corpus.rank(list(dict.fromkeys(parts)))]

    return ranker


def rm3_cost_ms(corpus: Corpus, texts: Sequence[str], k: int, n: int) -> float:
    """CPU ms per query of RM3's extra work as one product query would do it (no cache): the feedback
    terms from the first pass's rows and one more FTS5 query with the expanded words."""
    begun = time.process_time()
    for text in texts:
        words = query_words(segment_for_index(text))
        hits = corpus.rank(words, 100)
        terms = expansion(corpus, hits[:k], words, n, use_idf=False)
        corpus.rank([*words, *(w for w, _ in terms)], 100)
    total = time.process_time() - begun
    begun = time.process_time()
    for text in texts:
        corpus.rank(query_words(segment_for_index(text)), 100)
    return round((total - (time.process_time() - begun)) * 1000 / max(1, len(texts)), 2)


def evaluate(
    corpus: Corpus, queries: dict[str, str], qrels: dict[str, dict[str, int]], ranker: Ranker
) -> dict[str, float]:
    ndcg, recall = [], []
    for query_id, relevant in qrels.items():
        ranked = [corpus.ids[doc] for doc in ranker(queries[query_id])]
        ndcg.append(ndcg_at_10(ranked, relevant))
        recall.append(recall_at_100(ranked, relevant))
    return {
        "ndcg_at_10": round(statistics.fmean(ndcg), 4),
        "recall_at_100": round(statistics.fmean(recall), 4),
    }


def judged_queries(dataset: Path, split: str) -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    """The dataset's query texts by id, and the split's judgements of the queries that have any."""
    queries = {str(q["_id"]): str(q["text"]) for q in read_jsonl(dataset / "queries.jsonl")}
    qrels = {q: r for q, r in read_qrels(dataset / "qrels" / f"{split}.tsv").items() if q in queries and r}
    return queries, qrels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", type=Path, default=Path("../shared/datasets/scifact"))
    parser.add_argument("--split", default="train")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--lever", action="append", default=[], help="only these levers (and the baseline)")
    args = parser.parse_args()
    corpus = Corpus(args.dataset)
    queries, qrels = judged_queries(args.dataset, args.split)

    def want(lever: str) -> bool:
        return not args.lever or lever in args.lever

    rows: list[dict[str, Any]] = []

    def measure(lever: str, setting: str, ranker: Ranker) -> None:
        if lever != "baseline" and not want(lever):
            return
        rows.append({"lever": lever, "setting": setting, **evaluate(corpus, queries, qrels, ranker)})
        if not args.json:
            print(rows[-1], flush=True)

    measure("baseline", "product full-text leg", column_ranker(corpus, corpus.db, "rank"))
    titled = (
        Corpus._build(
            [
                (segment_for_index(d.get("title", "")), segment_for_index(d.get("text", "")))
                for d in corpus.docs
            ],
            ["title", "body"],
        )
        if want("title-fields")
        else corpus.db
    )
    for weight in (0.5, 1.5, 2.0, 3.0, 4.0) if want("title-fields") else ():
        measure(
            "title-fields",
            f"title weight {weight:g}",
            column_ranker(corpus, titled, f"bm25(f, {weight}, 1.0)"),
        )
    measure("query-split", "a hyphenated word as separate words", split_ranker(corpus))
    for repeat in (2, 3) if want("title-repeat") else ():
        repeated = Corpus._build(
            [
                (segment_for_index((d.get("title", "") + " ") * repeat + d.get("text", "")),)
                for d in corpus.docs
            ],
            ["text"],
        )
        measure("title-repeat", f"title x{repeat}", column_ranker(corpus, repeated, "rank"))
    for k, n, lam, use_idf in (
        (5, 10, 0.5, False),
        (10, 20, 0.5, False),
        (10, 20, 0.7, False),
        (10, 20, 0.85, False),
        (5, 10, 0.85, False),
        (10, 20, 0.85, True),
    ):
        measure(
            "rm3", f"k={k} n={n} lambda={lam:g}{' idf' if use_idf else ''}", rm3(corpus, k, n, lam, use_idf)
        )
    texts = [queries[q] for q in list(qrels)[:100]]
    cost = (
        {"rm3 k=10 n=20 (extra CPU ms per query)": rm3_cost_ms(corpus, texts, 10, 20)} if want("rm3") else {}
    )
    print(json.dumps({"split": args.split, "queries": len(qrels), "rows": rows, "cost": cost}, indent=1))


if __name__ == "__main__":
    main()
