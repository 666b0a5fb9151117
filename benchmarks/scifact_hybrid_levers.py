"""SciFact hybrid levers (issue 20 item 4): what moves mixedRecall with default settings.

Run (after ``fathom bench retrieval --data-dir /tmp/scifact`` kept the knowledge base):

    .venv/bin/python benchmarks/scifact_hybrid_levers.py --data-dir /tmp/scifact --split train [--json]
    # only some levers (and the baseline): --lever depth --lever rocchio ...

The first run reads the knowledge base's index vectors (``data_indexes``) and embeds every query with the
product's query embedder (the default local model), caching both in ``--cache-dir``
(default ``/tmp/scifact-levers``); the full-text leg is the product's FTS5 index rebuilt in memory by
``scifact_lexical_levers.Corpus`` (same text, segmentation, tokenizer, query and ``bm25()``). Every lever is
then a few numpy operations per query, so a sweep of dozens of settings costs seconds.

The baseline reproduces what a request with default settings gets (mixed pools 80 / 60, the chunk's best
index vector, convex min-max fusion at ``embeddingWeight`` 0.5, dedupe by text): train 0.7372. Levers:

* ``depth``: recall pools other than 80 / 60 (min-max then normalises over a longer list);
* ``norm``: z-score normalisation (``(s - mean) / std`` within the leg, a missing item at the leg's
  minimum) and rank-based normalisation;
* ``agg``: the document's score from its several index vectors: the best one (product), the mean vector,
  or ``best + g * mean``;
* ``union``: the embedding leg's cosine of every fused candidate (a full-text-only hit gets its real cosine
  instead of 0; the vectors are at hand);
* ``rocchio``: vector pseudo-relevance feedback, ``q' = normalise(q + b * mean(v_d for the top k))``, the
  feedback documents taken from the fused first pass (``fused``) or the embedding leg (``dense``), ``v_d`` a
  document's best-matching index vector; the embedding leg is searched again with ``q'`` and fused with the
  unchanged full-text leg;
* ``rm3-fused``: RM3 on the full-text leg (Anserini's recipe as in ``scifact_lexical_levers``) with the
  feedback documents taken from the fused first pass, weighted by their fused score;
* ``both``: ``rocchio`` and ``rm3-fused`` together;
* ``adaptive``: a per-query embedding weight ``(1 - blend) * 0.5 + blend * c_e / (c_e + c_f)``, ``c`` a
  leg's confidence (1 - the mean min-max score of the hits after its best one);
* ``lower``: min-max with the lower bound at the score of rank 10 / 20 / 40 instead of the pool's last.

``--split test`` with ``--lever`` / ``--setting`` runs the settings chosen on train, once.

Cost: process CPU ms per query of the lever's extra work over the baseline, measured over the split's first
200 queries (the full-text leg's first pass and RM3's per-word ``bm25()`` lists cached, so RM3's cost here is
a lower bound; ``scifact_lexical_levers`` measures it uncached: about 20 ms).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from scifact_lexical_levers import Corpus, expansion, judged_queries  # noqa: E402

from fathom.bench.retrieval import ndcg_at_10, read_jsonl, recall_at_100  # noqa: E402
from fathom.knowledge.text import letters_and_digits  # noqa: E402
from fathom.knowledge.tokenize import segment_for_index  # noqa: E402
from fathom.llm.local_embedding import LOCAL_EMBEDDING_MODEL_ID  # noqa: E402
from fathom.store.knowledge.fulltext import query_words  # noqa: E402

CACHE = "index-vectors.npz"
QUERY_CACHE = "query-vectors.npy"
Ranked = list[tuple[int, float]]  # (document index, score), best first


@dataclass
class Data:
    corpus: Corpus
    row_doc: np.ndarray  # document index per index-vector row, rows sorted by document
    starts: np.ndarray  # first row of each document (every document has >= 1 row)
    vectors: np.ndarray  # (rows, dims) float32, L2-normalised
    mean_vectors: np.ndarray  # (documents, dims): a document's normalised mean index vector
    query_vectors: dict[str, np.ndarray]  # query text -> normalised vector
    dedupe: list[str]  # letters and digits of each document's text


def _normalise(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return matrix / np.where(norms > 0, norms, 1.0)


async def _embed(texts: Sequence[str]) -> np.ndarray:
    from fathom.bench.retrieval import _embed_queries, _open

    with tempfile.TemporaryDirectory(prefix="fathom-levers-") as tmp:
        platform, _ = await _open(Path(tmp))
        try:
            vectors, _ = await _embed_queries(platform, list(texts), LOCAL_EMBEDDING_MODEL_ID)
        finally:
            await platform.close()
    return np.asarray([vectors[text] for text in texts], dtype=np.float32)


def embedded_queries(texts: Sequence[str], cache_dir: Path) -> np.ndarray:
    """The queries' vectors from the product's query embedder, cached in ``cache_dir``."""
    path = cache_dir / QUERY_CACHE
    if not path.exists():
        cache_dir.mkdir(parents=True, exist_ok=True)
        np.save(path, asyncio.run(_embed(texts)))
    return np.load(path)


def load(dataset: Path, data_dir: Path, cache_dir: Path) -> Data:
    corpus = Corpus(dataset)
    position = {doc_id: i for i, doc_id in enumerate(corpus.ids)}
    manifest = json.loads((data_dir / "bench-manifest.json").read_text(encoding="utf-8"))
    data_to_doc: dict[str, str] = manifest["dataToDoc"]
    texts = list(dict.fromkeys(str(q["text"]) for q in read_jsonl(dataset / "queries.jsonl")))
    queries = embedded_queries(texts, cache_dir)
    cache = cache_dir / CACHE
    if not cache.exists():
        db = sqlite3.connect(f"file:{data_dir / 'fathom.db'}?mode=ro", uri=True)
        rows = db.execute(
            "SELECT data_id, vector FROM data_indexes WHERE dataset_id = ? AND vector IS NOT NULL",
            (manifest["datasetId"],),
        ).fetchall()
        db.close()
        row_doc = np.array([position[data_to_doc[str(data_id)]] for data_id, _ in rows])
        vectors = np.vstack([np.frombuffer(bytes(blob), dtype="<f4") for _, blob in rows])
        np.savez(cache, row_doc=row_doc, vectors=vectors)
    stored = np.load(cache)
    order = np.argsort(stored["row_doc"], kind="stable")
    row_doc, vectors = stored["row_doc"][order], _normalise(stored["vectors"][order].astype(np.float32))
    if len(np.unique(row_doc)) != len(corpus.ids):
        raise SystemExit(
            f"{data_dir}: {len(np.unique(row_doc))} documents hold vectors, not {len(corpus.ids)}"
        )
    starts = np.flatnonzero(np.r_[True, row_doc[1:] != row_doc[:-1]])
    means = _normalise(np.add.reduceat(vectors, starts, axis=0))
    query_vectors = dict(zip(texts, _normalise(queries.astype(np.float32)), strict=True))
    dedupe = [letters_and_digits(text) for text in corpus.texts]
    return Data(corpus, row_doc, starts, vectors, means, query_vectors, dedupe)


# ---- the legs ----------------------------------------------------------------------------------


def doc_cosines(data: Data, query: np.ndarray, agg: str = "max", gamma: float = 0.0) -> np.ndarray:
    """Every document's cosine to ``query``: its best index vector (the product), the mean vector, or
    ``best + gamma * mean``."""
    if agg == "mean":
        return data.mean_vectors @ query
    best = np.maximum.reduceat(data.vectors @ query, data.starts)
    return best + gamma * (data.mean_vectors @ query) if agg == "max+mean" else best


def top(scores: np.ndarray, depth: int) -> Ranked:
    picked = np.argpartition(-scores, depth - 1)[:depth]
    picked = picked[np.lexsort((picked, -scores[picked]))]
    return [(int(d), float(scores[d])) for d in picked]


class FullText:
    """The product's full-text leg over the in-memory FTS5 index, cached per query (deepest pool)."""

    def __init__(self, corpus: Corpus, depth: int = 1000) -> None:
        self.corpus, self.depth = corpus, depth
        self._cache: dict[str, Ranked] = {}

    def words(self, text: str) -> list[str]:
        return query_words(segment_for_index(text))

    def leg(self, text: str, depth: int) -> Ranked:
        if text not in self._cache:
            self._cache[text] = self.corpus.rank(self.words(text), self.depth)
        return self._cache[text][:depth]

    def weighted(self, terms: Sequence[tuple[str, float]], depth: int) -> Ranked:
        scores: dict[int, float] = collections.defaultdict(float)
        for word, weight in terms:
            for doc, value in self.corpus.phrase(word).items():
                scores[doc] += weight * value
        ranked = sorted(scores, key=lambda doc: (-scores[doc], doc))[:depth]
        return [(doc, scores[doc]) for doc in ranked]


# ---- fusion ------------------------------------------------------------------------------------


def normalised(leg: Ranked, norm: str) -> tuple[dict[int, float], float]:
    """``({doc: normalised score}, value of a missing item)``."""
    values = np.array([s for _, s in leg], dtype=np.float64)
    if norm == "zscore":
        std = values.std()
        scaled = (values - values.mean()) / std if std > 0 else np.zeros_like(values)
        return {d: float(v) for (d, _), v in zip(leg, scaled, strict=True)}, float(scaled.min())
    if norm == "rank":
        return {d: 1.0 - i / len(leg) for i, (d, _) in enumerate(leg)}, 0.0
    low, high = values.min(), values.max()
    span = high - low
    scaled = (values - low) / span if span > 0 else np.ones_like(values)
    return {d: float(v) for (d, _), v in zip(leg, scaled, strict=True)}, 0.0


def convex(embedding: Ranked, full_text: Ranked, weight: float = 0.5, norm: str = "minmax") -> Ranked:
    """The product's convex fusion: ties go to the embedding leg's rank (the heavier or first leg), then
    the full-text leg's."""
    legs = [(weight, embedding), (1 - weight, full_text)]
    if weight < 0.5:
        legs.reverse()
    scaled = [(w, *normalised(leg, norm), {d: i for i, (d, _) in enumerate(leg)}) for w, leg in legs if leg]
    docs = list(dict.fromkeys(d for _, leg in legs for d, _ in leg))
    sums = {d: sum(w * values.get(d, missing) for w, values, missing, _ in scaled) for d in docs}
    inf = float("inf")
    key = {d: (-sums[d], *(ranks.get(d, inf) for *_, ranks in scaled)) for d in docs}
    return [(d, sums[d]) for d in sorted(docs, key=lambda d: key[d])]


def rrf(embedding: Ranked, full_text: Ranked, weight: float = 0.5) -> Ranked:
    sums: dict[int, float] = collections.defaultdict(float)
    for w, leg in ((weight, embedding), (1 - weight, full_text)):
        for i, (d, _) in enumerate(leg):
            sums[d] += w / (60 + i + 1)
    return sorted(sums.items(), key=lambda item: -item[1])


def dedupe(data: Data, ranked: Ranked) -> list[int]:
    seen: set[str] = set()
    kept = []
    for doc, _ in ranked:
        if data.dedupe[doc] not in seen:
            seen.add(data.dedupe[doc])
            kept.append(doc)
    return kept


# ---- levers ------------------------------------------------------------------------------------

Search = Callable[[str], Ranked]


def hybrid(
    data: Data,
    ft: FullText,
    *,
    e_depth: int = 80,
    f_depth: int = 60,
    norm: str = "minmax",
    agg: str = "max",
    gamma: float = 0.0,
    union: bool = False,
    fusion: str = "convex",
) -> Search:
    def search(text: str) -> Ranked:
        cosines = doc_cosines(data, data.query_vectors[text], agg, gamma)
        embedding, full_text = top(cosines, e_depth), ft.leg(text, f_depth)
        if union:
            have = {d for d, _ in embedding}
            extra = [(d, float(cosines[d])) for d, _ in full_text if d not in have]
            embedding = sorted([*embedding, *extra], key=lambda item: -item[1])
        if fusion == "rrf":
            return rrf(embedding, full_text)
        return convex(embedding, full_text, norm=norm)

    return search


def confidence(leg: Ranked, depth: int = 10) -> float:
    """How far a leg's best hit stands out: 1 - the mean min-max score of its next ``depth - 1`` hits."""
    values, _ = normalised(leg, "minmax")
    following = [values[d] for d, _ in leg[1:depth]]
    return 1.0 - statistics.fmean(following) if following else 1.0


def adaptive(data: Data, ft: FullText, *, blend: float, depth: int = 10, lower_at: int = 0) -> Search:
    """Per-query weight: ``(1 - blend) * 0.5 + blend * c_e / (c_e + c_f)`` from the legs' confidence;
    ``lower_at`` > 0 (and blend 0): min-max with the lower bound at that rank's score (below it: 0)."""

    def search(text: str) -> Ranked:
        embedding = top(doc_cosines(data, data.query_vectors[text]), 80)
        full_text = ft.leg(text, 60)
        if lower_at:
            embedding = [(d, max(s, embedding[min(lower_at, len(embedding)) - 1][1])) for d, s in embedding]
            full_text = [(d, max(s, full_text[min(lower_at, len(full_text)) - 1][1])) for d, s in full_text]
        if not embedding or not full_text:
            return convex(embedding, full_text)
        c_e, c_f = confidence(embedding, depth), confidence(full_text, depth)
        weight = (1 - blend) * 0.5 + blend * (c_e / (c_e + c_f) if c_e + c_f > 0 else 0.5)
        return convex(embedding, full_text, weight=weight)

    return search


def feedback_vector(data: Data, query: np.ndarray, docs: Sequence[int], source: str) -> np.ndarray:
    """Mean of the feedback documents' vectors: each one's best-matching index vector (``best``) or its
    mean vector (``mean``)."""
    if source == "mean":
        return data.mean_vectors[list(docs)].mean(axis=0)
    picked = []
    for doc in docs:
        rows = data.vectors[data.starts[doc] : data.starts[doc + 1] if doc + 1 < len(data.starts) else None]
        picked.append(rows[int(np.argmax(rows @ query))])
    return np.mean(picked, axis=0)


def rocchio(
    data: Data,
    ft: FullText,
    *,
    k: int,
    beta: float,
    first: str = "fused",
    source: str = "best",
    rm3: tuple[int, int, float] | None = None,
    vector: bool = True,
) -> Search:
    """Pseudo-relevance feedback from the first pass's top ``k``: the query vector moved towards them
    (``beta``; ``vector`` False skips it) and/or RM3 on the full-text leg (``rm3`` = (k, terms, lambda))."""

    def search(text: str) -> Ranked:
        query = data.query_vectors[text]
        cosines = doc_cosines(data, query)
        embedding, full_text = top(cosines, 80), ft.leg(text, 60)
        fused = convex(embedding, full_text)
        if vector:
            seeds = [d for d, _ in (fused if first == "fused" else embedding)[:k]]
            moved = query + beta * feedback_vector(data, query, seeds, source)
            embedding = top(doc_cosines(data, moved / np.linalg.norm(moved)), 80)
        if rm3 is not None:
            fb_k, terms, lam = rm3
            words = ft.words(text)
            hits = [(d, max(s, 1e-6)) for d, s in fused[:fb_k]]
            expanded = [(w, lam / len(words)) for w in words]
            expanded += [(w, (1 - lam) * v) for w, v in expansion(ft.corpus, hits, words, terms, False)]
            full_text = ft.weighted(expanded, 60) if words else full_text
        return convex(embedding, full_text)

    return search


def per_query(
    data: Data, queries: dict[str, str], qrels: dict[str, dict[str, int]], search: Search
) -> tuple[list[float], list[float]]:
    """Each judged query's nDCG@10 and Recall@100, in ``qrels`` order."""
    ndcg, recall = [], []
    for query_id, relevant in qrels.items():
        ranked = [data.corpus.ids[d] for d in dedupe(data, search(queries[query_id]))]
        ndcg.append(ndcg_at_10(ranked, relevant))
        recall.append(recall_at_100(ranked, relevant))
    return ndcg, recall


def means(ndcg: Sequence[float], recall: Sequence[float]) -> dict[str, float]:
    return {
        "ndcg_at_10": round(statistics.fmean(ndcg), 4),
        "recall_at_100": round(statistics.fmean(recall), 4),
    }


def evaluate(
    data: Data, queries: dict[str, str], qrels: dict[str, dict[str, int]], search: Search
) -> dict[str, float]:
    return means(*per_query(data, queries, qrels, search))


def cost_ms(texts: Sequence[str], lever: Search, baseline: Search) -> float:
    """Extra process CPU ms per query of ``lever`` over ``baseline`` (full-text cache warm for both)."""
    for text in texts:
        baseline(text)
    begun = time.process_time()
    for text in texts:
        lever(text)
    spent = time.process_time() - begun
    begun = time.process_time()
    for text in texts:
        baseline(text)
    return round((spent - (time.process_time() - begun)) * 1000 / max(1, len(texts)), 2)


def settings(data: Data, ft: FullText) -> list[tuple[str, str, Search]]:
    rows: list[tuple[str, str, Search]] = [
        ("baseline", "default: convex min-max 0.5, pools 80/60, best index vector", hybrid(data, ft)),
        ("baseline", "fusion rrf 0.5", hybrid(data, ft, fusion="rrf")),
    ]
    for e, f in ((50, 50), (100, 100), (150, 150), (200, 200), (300, 300), (80, 100), (100, 60), (40, 30)):
        rows.append(("depth", f"pools {e}/{f}", hybrid(data, ft, e_depth=e, f_depth=f)))
    for norm in ("zscore", "rank"):
        for e, f in ((80, 60), (200, 200), (1000, 1000)):
            rows.append(("norm", f"{norm}, pools {e}/{f}", hybrid(data, ft, norm=norm, e_depth=e, f_depth=f)))
    for blend in (0.25, 0.5, 1.0):
        for depth in (5, 10, 20):
            rows.append(
                (
                    "adaptive",
                    f"blend {blend:g}, confidence over top {depth}",
                    adaptive(data, ft, blend=blend, depth=depth),
                )
            )
    for lower_at in (10, 20, 40):
        rows.append(
            (
                "lower",
                f"min-max lower bound at rank {lower_at}",
                adaptive(data, ft, blend=0.0, lower_at=lower_at),
            )
        )
    rows.append(("agg", "mean vector", hybrid(data, ft, agg="mean")))
    for gamma in (0.25, 0.5, 1.0):
        rows.append(("agg", f"best + {gamma:g} x mean", hybrid(data, ft, agg="max+mean", gamma=gamma)))
    rows.append(("union", "cosine of every candidate", hybrid(data, ft, union=True)))
    for first in ("fused", "dense"):
        for k in (1, 3, 5, 10):
            for beta in (0.25, 0.5, 1.0):
                rows.append(
                    (
                        "rocchio",
                        f"{first} top {k}, b {beta:g}",
                        rocchio(data, ft, k=k, beta=beta, first=first),
                    )
                )
    for k in (3, 5):
        rows.append(
            (
                "rocchio",
                f"fused top {k}, b 0.5, mean vectors",
                rocchio(data, ft, k=k, beta=0.5, source="mean"),
            )
        )
    for fb_k, terms, lam in ((3, 10, 0.85), (5, 10, 0.85), (5, 20, 0.7), (10, 20, 0.85), (3, 10, 0.7)):
        rows.append(
            (
                "rm3-fused",
                f"k {fb_k}, {terms} terms, lambda {lam:g}",
                rocchio(data, ft, k=0, beta=0, rm3=(fb_k, terms, lam), vector=False),
            )
        )
    for k, beta in ((3, 0.5), (5, 0.5)):
        rows.append(
            (
                "both",
                f"rocchio fused top {k} b {beta:g} + rm3 k 5 10 terms 0.85",
                rocchio(data, ft, k=k, beta=beta, rm3=(5, 10, 0.85)),
            )
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", type=Path, default=Path("../shared/datasets/scifact"))
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--cache-dir", type=Path, default=Path("/tmp/scifact-levers"))
    parser.add_argument("--split", default="train")
    parser.add_argument("--queries-only", action="store_true", help="only embed and cache the queries")
    parser.add_argument("--lever", action="append", default=[], help="only these levers (and the baseline)")
    parser.add_argument("--setting", action="append", default=[], help="only settings containing this text")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.queries_only:
        texts = list(dict.fromkeys(str(q["text"]) for q in read_jsonl(args.dataset / "queries.jsonl")))
        print(embedded_queries(texts, args.cache_dir).shape)
        return
    data = load(args.dataset, args.data_dir, args.cache_dir)
    ft = FullText(data.corpus)
    queries, qrels = judged_queries(args.dataset, args.split)
    texts = [queries[q] for q in list(qrels)[:200]]
    rows: list[dict[str, Any]] = []
    base = hybrid(data, ft)
    for lever, setting, search in settings(data, ft):
        if lever != "baseline" and args.lever and lever not in args.lever:
            continue
        if lever != "baseline" and args.setting and not any(s in setting for s in args.setting):
            continue
        row = {"lever": lever, "setting": setting, **evaluate(data, queries, qrels, search)}
        row["extra_cpu_ms"] = cost_ms(texts, search, base) if lever != "baseline" else 0.0
        rows.append(row)
        if not args.json:
            print(row, flush=True)
    if args.json:
        print(json.dumps({"split": args.split, "queries": len(qrels), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
