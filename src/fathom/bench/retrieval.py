"""Retrieval benchmark over a BEIR-format dataset, through Fathom's real ingestion and search pipeline.

Each document (``title + " " + text``) becomes one row of a knowledge base, embedded and indexed by the
same code the ``pushData`` API uses; queries run through ``search_dataset_data`` with the stored indexes.
Scores follow trec_eval: nDCG@10 with graded qrels, Recall@100. Also measured: ingestion throughput of a
long document through the job pipeline against the raw throughput of the same embedder on the same chunks.
"""

from __future__ import annotations

import json
import math
import statistics
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fathom.config import Settings
from fathom.datasets.ingest import PushRow
from fathom.knowledge.chunk import split_text_to_chunks
from fathom.knowledge.chunk_settings import split_chunk_indexes
from fathom.llm.local_embedding import LOCAL_EMBEDDING_MODEL_ID
from fathom.platform import Platform

MODES = ("embedding", "fullTextRecall", "mixedRecall")
PUSH_BATCH = 64


@dataclass
class ModeResult:
    mode: str
    ndcg_at_10: float
    recall_at_100: float
    queries: int
    latency_ms_p50: float
    latency_ms_p95: float


@dataclass
class BenchResult:
    dataset: str
    split: str
    documents: int
    ingest_seconds: float
    modes: list[ModeResult] = field(default_factory=list)
    ingestion: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "split": self.split,
            "documents": self.documents,
            "ingestSeconds": round(self.ingest_seconds, 2),
            "modes": [vars(m) for m in self.modes],
            "ingestion": self.ingestion,
        }


def read_jsonl(path: Path) -> Iterable[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        query_id, doc_id, score = line.split("\t")[:3]
        qrels.setdefault(query_id, {})[doc_id] = int(score)
    return qrels


def ndcg_at_10(ranked: list[str], relevant: dict[str, int]) -> float:
    dcg = sum((2 ** relevant.get(doc, 0) - 1) / math.log2(i + 2) for i, doc in enumerate(ranked[:10]))
    ideal = sorted(relevant.values(), reverse=True)[:10]
    idcg = sum((2**grade - 1) / math.log2(i + 2) for i, grade in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at_100(ranked: list[str], relevant: dict[str, int]) -> float:
    positive = {doc for doc, grade in relevant.items() if grade > 0}
    return len(positive & set(ranked[:100])) / len(positive) if positive else 0.0


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


async def _ingest_corpus(
    platform: Platform, team_id: str, corpus: list[dict[str, Any]]
) -> tuple[str, dict[str, str]]:
    dataset = await platform.datasets.create_dataset(team_id, "bench", vector_model=LOCAL_EMBEDDING_MODEL_ID)
    collection = await platform.datasets.create_collection(team_id, dataset.id, "corpus", type="virtual")
    data_to_doc: dict[str, str] = {}
    for start in range(0, len(corpus), PUSH_BATCH):
        batch = corpus[start : start + PUSH_BATCH]
        rows = [PushRow(f"{doc.get('title', '')} {doc.get('text', '')}".strip()) for doc in batch]
        ids = await platform.ingestion.push_rows(collection, rows)
        data_to_doc.update(zip(ids, (str(doc["_id"]) for doc in batch), strict=True))
    return dataset.id, data_to_doc


async def _ingestion_throughput(
    platform: Platform, team_id: str, corpus: list[dict[str, Any]]
) -> dict[str, float]:
    """One long Markdown document through the job pipeline vs. raw embedding of the same index texts."""
    text = "\n\n".join(f"## {doc.get('title', '')}\n\n{doc.get('text', '')}" for doc in corpus)
    embedder = platform.embedders.get(LOCAL_EMBEDDING_MODEL_ID)
    settings = platform.embedders.chunk_settings(LOCAL_EMBEDDING_MODEL_ID)
    chunks = [c for c in split_text_to_chunks(text, settings.split_options()) if c.strip()]
    index_texts = [t for chunk in chunks for t in (split_chunk_indexes(chunk, "", settings) or [chunk])]
    started = time.perf_counter()
    for start in range(0, len(index_texts), 32):
        await embedder.embed(index_texts[start : start + 32])
    raw_seconds = time.perf_counter() - started
    dataset = await platform.datasets.create_dataset(
        team_id, "throughput", vector_model=LOCAL_EMBEDDING_MODEL_ID
    )
    collection = await platform.datasets.create_collection(
        team_id, dataset.id, "long", type="virtual", raw_text=text
    )
    await platform.ingestion.enqueue(collection)
    started = time.perf_counter()
    await platform.new_worker().run_until_idle()
    pipeline_seconds = time.perf_counter() - started
    done = await platform.datasets.get_collection(team_id, collection.id)
    return {
        "chunks": float(done.chunks_done),
        "rawEmbedChunksPerSecond": round(len(chunks) / raw_seconds, 2),
        "pipelineChunksPerSecond": round(done.chunks_done / pipeline_seconds, 2),
        "ratio": round((done.chunks_done / pipeline_seconds) / (len(chunks) / raw_seconds), 3),
    }


async def run_retrieval_bench(
    dataset_dir: Path,
    *,
    split: str = "test",
    modes: Iterable[str] = MODES,
    max_docs: int | None = None,
    max_queries: int | None = None,
    throughput_docs: int = 300,
) -> BenchResult:
    corpus = list(read_jsonl(dataset_dir / "corpus.jsonl"))[: max_docs or None]
    queries = {str(q["_id"]): str(q["text"]) for q in read_jsonl(dataset_dir / "queries.jsonl")}
    qrels = read_qrels(dataset_dir / "qrels" / f"{split}.tsv")
    kept = {str(doc["_id"]) for doc in corpus}
    qrels = {q: {d: g for d, g in rel.items() if d in kept} for q, rel in qrels.items() if q in queries}
    qrels = {q: rel for q, rel in qrels.items() if rel}
    query_ids = sorted(qrels)[: max_queries or None]
    with tempfile.TemporaryDirectory(prefix="fathom-bench-") as tmp:
        platform = Platform.build(Settings(data_dir=Path(tmp), workers=0))
        boot = await platform.prepare()
        try:
            started = time.perf_counter()
            dataset_id, data_to_doc = await _ingest_corpus(platform, boot.team_id, corpus)
            result = BenchResult(dataset_dir.name, split, len(corpus), time.perf_counter() - started)
            for mode in modes:
                scores_10, recalls, latencies = [], [], []
                for query_id in query_ids:
                    begun = time.perf_counter()
                    found: Any = await platform.search.search(
                        boot.team_id,
                        {
                            "queries": [queries[query_id]],
                            "datasetIds": [dataset_id],
                            "searchMode": mode,
                            "limit": 10**9,
                        },
                    )
                    latencies.append((time.perf_counter() - begun) * 1000)
                    ranked = list(dict.fromkeys(data_to_doc[item.id] for item in found.search_res))
                    scores_10.append(ndcg_at_10(ranked, qrels[query_id]))
                    recalls.append(recall_at_100(ranked, qrels[query_id]))
                result.modes.append(
                    ModeResult(
                        mode,
                        round(statistics.fmean(scores_10), 4) if scores_10 else 0.0,
                        round(statistics.fmean(recalls), 4) if recalls else 0.0,
                        len(query_ids),
                        round(_percentile(latencies, 0.5), 2),
                        round(_percentile(latencies, 0.95), 2),
                    )
                )
            if throughput_docs:
                result.ingestion = await _ingestion_throughput(
                    platform, boot.team_id, corpus[:throughput_docs]
                )
            return result
        finally:
            await platform.close()
