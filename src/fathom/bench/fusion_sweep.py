"""Tuning sweep for mixedRecall's fusion over a knowledge base ``fathom bench retrieval --data-dir`` kept.

Each query's two legs are recalled once, as a mixedRecall search recalls them (the pipeline's own recall
functions, the mixed pool sizes), and every setting (fusion x ``embeddingWeight`` x coverage exponent)
then fuses those lists with the pipeline's own ``fuse_legs`` and dedupe, so a sweep of a hundred settings
costs one search per query plus the fusion. The ranking equals what ``search_dataset_data`` returns for
that setting with no token budget (the similarity filter does not apply to mixedRecall without rerank).
Coverage is the embedding model's ``token_coverage`` of the query, as the pipeline measures it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fathom.bench.retrieval import (
    FUSIONS,
    BenchDataDirError,
    _embed_queries,
    _open,
    ndcg_at_10,
    read_jsonl,
    read_manifest,
    read_qrels,
    recall_at_100,
)
from fathom.knowledge.ports import SearchScope
from fathom.knowledge.search.filters import count_recall_limit, dedupe_results
from fathom.knowledge.search.hybrid import FusionPlan, fuse_legs, query_coverage
from fathom.knowledge.search.recall import embedding_recall, full_text_recall
from fathom.knowledge.search.types import SearchDataItem
from fathom.llm.local_embedding import LOCAL_EMBEDDING_MODEL_ID


@dataclass
class SweepRow:
    fusion: str
    embedding_weight: float
    exponent: float
    ndcg_at_10: float
    recall_at_100: float

    def as_dict(self) -> dict[str, Any]:
        exponent: Any = self.exponent if math.isfinite(self.exponent) else "inf"
        return {
            "fusion": self.fusion,
            "embeddingWeight": self.embedding_weight,
            "coverageExponent": exponent,
            "ndcg_at_10": self.ndcg_at_10,
            "recall_at_100": self.recall_at_100,
        }


@dataclass
class _Legs:
    relevant: dict[str, int]
    coverage: float | None
    embedding: list[SearchDataItem]
    full_text: list[SearchDataItem]


# the bench's fusion names, plus ``rrf-coverage``: weighted RRF with coverage-scaled weights
SWEEP_FUSIONS = (*FUSIONS, "rrf-coverage")


def _request(fusion: str) -> tuple[str | None, str, FusionPlan | None]:
    """``(fusion field, convexNormalization, plan override)`` for a sweep fusion name."""
    if fusion == "default":
        return None, "minmax", None
    if fusion == "rrf-coverage":
        return None, "minmax", FusionPlan("rrf", coverage_aware=True)
    if fusion.startswith("convex"):
        return "convex", fusion.removeprefix("convex-") if "-" in fusion else "minmax", None
    return fusion, "minmax", None


async def run_fusion_sweep(
    dataset_dir: Path,
    data_dir: Path,
    *,
    split: str,
    fusions: Sequence[str],
    weights: Sequence[float],
    exponents: Sequence[float],
    max_queries: int | None = None,
) -> dict[str, Any]:
    """nDCG@10 / Recall@100 per setting, plus the coverage distribution of the split's queries."""
    corpus_size = sum(1 for _ in read_jsonl(dataset_dir / "corpus.jsonl"))
    # the knowledge base of whichever embedding model it was ingested with (``--vector-model``)
    manifest = read_manifest(data_dir, dataset_dir, corpus_size, None, vector_model=None, split_rule=None)
    if manifest is None:
        raise BenchDataDirError(
            f"--data-dir {data_dir} holds no ingested corpus: run `fathom bench retrieval --dataset "
            f"{dataset_dir} --data-dir {data_dir}` first"
        )
    queries = {str(q["_id"]): str(q["text"]) for q in read_jsonl(dataset_dir / "queries.jsonl")}
    qrels = read_qrels(dataset_dir / "qrels" / f"{split}.tsv")
    qrels = {q: rel for q, rel in qrels.items() if q in queries and rel}
    qrels = {q: qrels[q] for q in sorted(qrels)[: max_queries or None]}
    data_to_doc: dict[str, str] = dict(manifest["dataToDoc"])
    platform, team_id = await _open(data_dir)
    try:
        if manifest.get("teamId") != team_id:
            raise BenchDataDirError(f"--data-dir {data_dir}: its team is not the manifest's")
        search = platform.search
        scope = SearchScope(dataset_ids=frozenset([str(manifest["datasetId"])]))
        texts = list(dict.fromkeys(queries[q] for q in qrels))
        vector_model = str(manifest.get("vectorModel") or LOCAL_EMBEDDING_MODEL_ID)
        vectors, _ = await _embed_queries(platform, texts, vector_model)
        embedder = platform.embedders.query_embedder(vector_model)
        embedding_limit, full_text_limit = count_recall_limit("mixedRecall")
        legs: list[_Legs] = []
        for query_id, relevant in qrels.items():
            text = queries[query_id]
            embedded, _ = await embedding_recall(
                [text], [vectors[text]], search.vectors, search.chunk_store, scope, embedding_limit
            )
            matched, _ = await full_text_recall(
                [text], search.full_text, search.chunk_store, scope, full_text_limit
            )
            legs.append(_Legs(relevant, query_coverage(embedder, [text]), embedded, matched))
    finally:
        await platform.close()

    rows: list[SweepRow] = []
    for fusion in fusions:
        field, normalization, plan = _request(fusion)
        for weight in weights:
            for exponent in exponents:
                scores, recalls = [], []
                for leg in legs:
                    fused = fuse_legs(
                        leg.embedding,
                        leg.full_text,
                        weight=weight,
                        fusion=field,
                        normalization=normalization,
                        coverage=leg.coverage,
                        exponent=exponent,
                        plan=plan,
                    )  # an iterator: dedupe below takes every fused item
                    kept, _ = dedupe_results(fused)
                    ranked = list(dict.fromkeys(data_to_doc[item.id] for item in kept))
                    scores.append(ndcg_at_10(ranked, leg.relevant))
                    recalls.append(recall_at_100(ranked, leg.relevant))
                rows.append(
                    SweepRow(
                        fusion,
                        weight,
                        exponent,
                        round(statistics.fmean(scores), 4) if scores else 0.0,
                        round(statistics.fmean(recalls), 4) if recalls else 0.0,
                    )
                )
    coverages = sorted(leg.coverage for leg in legs if leg.coverage is not None)
    summary = (
        {
            "mean": round(statistics.fmean(coverages), 3),
            "p10": coverages[len(coverages) // 10],
            "p50": coverages[len(coverages) // 2],
            "p90": coverages[9 * len(coverages) // 10],
        }
        if coverages
        else {}
    )
    return {
        "dataset": dataset_dir.name,
        "split": split,
        "queries": len(legs),
        "queryCoverage": summary,
        "rows": [row.as_dict() for row in rows],
    }
