"""SciFact index levers (issue 20 item 4): what other index texts do to mixedRecall with default settings.

Run (after ``fathom bench retrieval --data-dir /tmp/scifact`` kept the knowledge base):

    .venv/bin/python benchmarks/scifact_index_levers.py --data-dir /tmp/scifact --split train [--json]
    # only some schemes (and the product's): --scheme sentences --scheme "chunks 384" ...

The product's default indexes of a pushed row are its text split to the embedding model's index size
(``split_chunk_indexes``: 768 characters for the default local model, so 11,507 vectors for SciFact's 5,183
abstracts). A scheme here is another set of index texts per document, embedded once by the product's
passage embedder (``LocalEmbedder``, the default local model) and cached in ``--cache-dir``; the document's
embedding score is then its best index vector (as the product's search takes the chunk's best index) and
the fusion is the product's default (convex min-max at ``embeddingWeight`` 0.5, pools 80 / 60), computed by
``scifact_hybrid_levers`` (which reproduces the product's numbers to the fourth digit). Schemes:

* ``chunks 384`` (or ``--scheme "chunks N"`` for any N): the row's text split by the product's splitter at
  index size N (FastGPT's ``indexSize``);
* ``sentences``: one vector per sentence of the title and abstract;
* ``title``: the title as one more vector beside the product's (a client can send it as an extra index);
* ``product + X``: the product's vectors and X's together (the best of all counts).

Each scheme's row reports the embedding leg alone and the hybrid, and the vectors it needs (index size on
disk and search cost scale with it). Embedding cost is printed when a scheme is first embedded.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from scifact_hybrid_levers import (  # noqa: E402
    Data,
    FullText,
    _normalise,
    doc_cosines,
    evaluate,
    hybrid,
    judged_queries,
    load,
    means,
    per_query,
    top,
)
from scifact_lexical_levers import Corpus  # noqa: E402

from fathom.knowledge.chunk import SplitOptions, split_text_to_chunks  # noqa: E402
from fathom.llm.local_embedding import LocalEmbedder  # noqa: E402

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])")


def sentences(text: str) -> list[str]:
    return [s for s in (part.strip() for part in _SENTENCE_END.split(text)) if s]


def _chunks(size: int) -> Callable[[dict[str, Any], str], list[str]]:
    options = SplitOptions(chunk_size=size)
    return lambda doc, text: split_text_to_chunks(text, options)


SCHEMES: dict[str, Callable[[dict[str, Any], str], list[str]]] = {
    "sentences": lambda doc, text: sentences(str(doc.get("title", ""))) + sentences(str(doc.get("text", ""))),
    "title": lambda doc, text: [str(doc.get("title", "")).strip() or text],
    "chunks 384": _chunks(384),
}


def scheme(name: str) -> Callable[[dict[str, Any], str], list[str]]:
    """A scheme by name; ``chunks N`` for any index size N."""
    if name in SCHEMES:
        return SCHEMES[name]
    size = name.removeprefix("chunks ")
    if size.isdigit():
        return _chunks(int(size))
    raise SystemExit(f"--scheme {name!r}: choose one of {', '.join(SCHEMES)} or 'chunks N'")


def scheme_vectors(corpus: Corpus, name: str, cache_dir: Path) -> tuple[np.ndarray, np.ndarray]:
    """(row_doc, vectors) of one scheme's index texts, embedded once and cached."""
    path = cache_dir / f"scheme-{name.replace(' ', '-')}.npz"
    if not path.exists():
        make = scheme(name)
        row_doc: list[int] = []
        texts: list[str] = []
        for i, (doc, text) in enumerate(zip(corpus.docs, corpus.texts, strict=True)):
            for piece in make(doc, text.strip()) or [text.strip()]:
                row_doc.append(i)
                texts.append(piece)
        embedder = LocalEmbedder()
        begun, cpu = time.perf_counter(), time.process_time()
        # longest first, so a batch pads to texts of about its own length; then back in order
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        vectors = np.empty((len(texts), embedder.dimensions), dtype=np.float32)
        for at in range(0, len(order), 1024):
            picked = order[at : at + 1024]
            vectors[picked] = np.asarray(embedder.embed_sync([texts[i] for i in picked]), dtype=np.float32)
        wall, cpu = time.perf_counter() - begun, time.process_time() - cpu
        print(
            f"# {name}: {len(texts)} texts embedded in {wall:.0f} s wall, {cpu:.0f} s CPU "
            f"({len(texts) / wall:.1f} texts/s)",
            file=sys.stderr,
            flush=True,
        )
        np.savez(path, row_doc=np.asarray(row_doc), vectors=vectors)
    stored = np.load(path)
    return stored["row_doc"], stored["vectors"]


def with_vectors(data: Data, parts: Sequence[tuple[np.ndarray, np.ndarray]]) -> Data:
    row_doc = np.concatenate([p[0] for p in parts])
    vectors = np.vstack([p[1] for p in parts])
    order = np.argsort(row_doc, kind="stable")
    row_doc, vectors = row_doc[order], _normalise(vectors[order].astype(np.float32))
    starts = np.flatnonzero(np.r_[True, row_doc[1:] != row_doc[:-1]])
    means = _normalise(np.add.reduceat(vectors, starts, axis=0))
    return replace(data, row_doc=row_doc, starts=starts, vectors=vectors, mean_vectors=means)


def paired(lever: list[float], baseline: list[float]) -> str:
    """The mean paired difference and its standard error over queries."""
    diffs = [a - b for a, b in zip(lever, baseline, strict=True)]
    return f"{statistics.fmean(diffs):+.4f} ± {statistics.stdev(diffs) / math.sqrt(len(diffs)):.4f}"


def embedding_only(data: Data) -> Callable[[str], list[tuple[int, float]]]:
    return lambda text: top(doc_cosines(data, data.query_vectors[text]), 100)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", type=Path, default=Path("../shared/datasets/scifact"))
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--cache-dir", type=Path, default=Path("/tmp/scifact-levers"))
    parser.add_argument("--split", default="train")
    parser.add_argument("--scheme", action="append", default=[], help="only these schemes (with product + X)")
    parser.add_argument("--embed-only", action="store_true", help="only embed and cache the schemes")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    names = args.scheme or list(SCHEMES)
    if args.embed_only:
        corpus = Corpus(args.dataset)
        for name in names:
            scheme_vectors(corpus, name, args.cache_dir)
        return
    data = load(args.dataset, args.data_dir, args.cache_dir)
    product = (data.row_doc, data.vectors)
    ft = FullText(data.corpus)
    queries, qrels = judged_queries(args.dataset, args.split)
    candidates: list[tuple[str, Data]] = [("product (768)", data)]
    for name in names:
        own = scheme_vectors(data.corpus, name, args.cache_dir)
        if name != "title":
            candidates.append((name, with_vectors(data, [own])))
        candidates.append((f"product + {name}", with_vectors(data, [product, own])))
    rows: list[dict[str, Any]] = []
    baseline, _ = per_query(data, queries, qrels, hybrid(data, ft))
    for name, scheme in candidates:
        row: dict[str, Any] = {"scheme": name, "vectors": int(len(scheme.vectors))}
        row["embedding"] = evaluate(scheme, queries, qrels, embedding_only(scheme))
        ndcg, recall = per_query(scheme, queries, qrels, hybrid(scheme, ft))
        row["hybrid"], row["hybrid_delta"] = means(ndcg, recall), paired(ndcg, baseline)
        for gamma in (0.25, 0.5):
            row[f"hybrid, best + {gamma:g} x mean"] = evaluate(
                scheme, queries, qrels, hybrid(scheme, ft, agg="max+mean", gamma=gamma)
            )
        rows.append(row)
        if not args.json:
            print(row, flush=True)
    if args.json:
        print(json.dumps({"split": args.split, "queries": len(qrels), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
