"""Retrieval benchmark over a BEIR-format dataset, through Fathom's real ingestion and search pipeline.

Each document (``title + " " + text``) becomes one row of a knowledge base, embedded and indexed by the
same code the ``pushData`` API uses; queries run through ``search_dataset_data`` with the stored indexes.
Scores follow trec_eval: nDCG@10 with graded qrels, Recall@100. Also measured: ingestion throughput of a
long document through the job pipeline against the raw throughput of the same embedder on the same chunks.

With ``data_dir`` the ingested knowledge base is kept in that folder with a small manifest
(``bench-manifest.json``) and reused by the next run over the same corpus, so a weight sweep does not
re-ingest. A folder whose manifest names another corpus (or that holds anything without a manifest, e.g.
an interrupted ingestion) is refused with an error; delete it to rebuild.

Query vectors are computed once per query (timed: ``queryEmbedding``) and reused by every setting of a
sweep, so the per-setting latency is the search alone: the same model gives the same vector every time.
"""

from __future__ import annotations

import json
import math
import statistics
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from fathom.config import Settings
from fathom.datasets.embedders import EmbedderResolver
from fathom.datasets.ingest import PushRow
from fathom.knowledge.chunk import DEFAULT_SPLIT_RULE, split_text_to_chunks
from fathom.knowledge.chunk_settings import split_chunk_indexes
from fathom.knowledge.ports import Embedder
from fathom.llm.local_embedding import LOCAL_EMBEDDING_MODEL_ID
from fathom.platform import Platform

MODES = ("embedding", "fullTextRecall", "mixedRecall")
# ``default`` sends no ``fusion`` (what every FastGPT client gets); ``convex`` uses the pipeline's default
# normalisation; ``convex-minmax`` and ``convex-tmm`` name one
FUSIONS = ("default", "rrf", "convex", "convex-minmax", "convex-tmm")
PUSH_BATCH = 64
MANIFEST = "bench-manifest.json"


class BenchDataDirError(RuntimeError):
    """The ``--data-dir`` folder holds something other than this corpus's knowledge base."""


@dataclass
class ModeResult:
    mode: str
    ndcg_at_10: float
    recall_at_100: float
    queries: int
    latency_ms_p50: float
    latency_ms_p95: float
    fusion: str | None = None  # mixedRecall only
    embedding_weight: float | None = None  # mixedRecall only
    ndcg_at_10_stderr: float = 0.0  # standard error of the mean over the queries

    @property
    def label(self) -> str:
        if self.fusion is None:
            return self.mode
        return f"{self.mode}-{self.fusion}-{self.embedding_weight:g}"


@dataclass
class BenchResult:
    dataset: str
    split: str
    documents: int
    ingest_seconds: float
    reused_data_dir: bool = False
    vector_model: str = LOCAL_EMBEDDING_MODEL_ID
    split_rule: str = DEFAULT_SPLIT_RULE
    query_embedding: dict[str, float] = field(default_factory=dict)
    modes: list[ModeResult] = field(default_factory=list)
    ingestion: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "split": self.split,
            "documents": self.documents,
            "ingestSeconds": round(self.ingest_seconds, 2),
            "reusedDataDir": self.reused_data_dir,
            "vectorModel": self.vector_model,
            "splitRule": self.split_rule,
            "queryEmbedding": self.query_embedding,
            "modes": [{**asdict(m), "label": m.label} for m in self.modes],
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


def _search_settings(
    modes: Iterable[str], fusions: Sequence[str], weights: Sequence[float]
) -> list[tuple[str, str | None, float | None]]:
    """``(mode, fusion, embeddingWeight)`` per measured setting: single legs once, mixedRecall per
    fusion x weight."""
    settings: list[tuple[str, str | None, float | None]] = []
    for mode in modes:
        if mode == "mixedRecall":
            settings += [(mode, fusion, weight) for fusion in fusions for weight in weights]
        else:
            settings.append((mode, None, None))
    return settings


async def _ingest_corpus(
    platform: Platform, team_id: str, corpus: list[dict[str, Any]], vector_model: str, split_rule: str
) -> tuple[str, dict[str, str]]:
    dataset = await platform.datasets.create_dataset(
        team_id, "bench", vector_model=vector_model, chunk_settings={"chunkSplitRule": split_rule}
    )
    collection = await platform.datasets.create_collection(team_id, dataset.id, "corpus", type="virtual")
    data_to_doc: dict[str, str] = {}
    for start in range(0, len(corpus), PUSH_BATCH):
        batch = corpus[start : start + PUSH_BATCH]
        rows = [PushRow(f"{doc.get('title', '')} {doc.get('text', '')}".strip()) for doc in batch]
        ids = await platform.ingestion.push_rows(collection, rows)
        data_to_doc.update(zip(ids, (str(doc["_id"]) for doc in batch), strict=True))
    return dataset.id, data_to_doc


def _manifest_key(
    dataset_dir: Path,
    documents: int,
    max_docs: int | None,
    vector_model: str,
    split_rule: str = DEFAULT_SPLIT_RULE,
) -> dict[str, Any]:
    return {
        "dataset": str(dataset_dir.resolve()),
        "documents": documents,
        "maxDocs": max_docs,
        "vectorModel": vector_model,
        "splitRule": split_rule,
    }


def read_manifest(
    data_dir: Path,
    dataset_dir: Path,
    documents: int,
    max_docs: int | None,
    vector_model: str | None = LOCAL_EMBEDDING_MODEL_ID,
    split_rule: str | None = DEFAULT_SPLIT_RULE,
) -> dict[str, Any] | None:
    """The stored manifest when ``data_dir`` holds this corpus; None when the folder is empty or new.
    ``vector_model`` None accepts the knowledge base of whichever model the manifest names, ``split_rule``
    None the one cut by whichever splitter rule.

    Raises ``BenchDataDirError`` when the folder holds another corpus or an unfinished ingestion."""
    path = data_dir / MANIFEST
    if not path.exists():
        if data_dir.exists() and any(data_dir.iterdir()):
            raise BenchDataDirError(
                f"--data-dir {data_dir} is not empty and has no {MANIFEST} (an interrupted ingestion or "
                "another program's folder); delete it or choose another folder"
            )
        return None
    manifest: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    # manifests written before --vector-model hold the default local model's knowledge base, those written
    # before --split-rule one cut by Fathom's splitter
    stored = {
        "vectorModel": str(manifest.get("vectorModel") or LOCAL_EMBEDDING_MODEL_ID),
        "splitRule": str(manifest.get("splitRule") or "fathom"),
    }
    expected = _manifest_key(
        dataset_dir,
        documents,
        max_docs,
        vector_model or stored["vectorModel"],
        split_rule or stored["splitRule"],
    )
    found = {key: stored[key] if key in stored else manifest.get(key) for key in expected}
    if found != expected:
        raise BenchDataDirError(
            f"--data-dir {data_dir} holds another corpus ({found}, this run needs {expected}); "
            "delete the folder to rebuild it or choose another one"
        )
    return manifest


class _QueryVectorResolver(EmbedderResolver):
    """The platform's resolver, except that query embedders answer from precomputed vectors."""

    def __init__(self, base: EmbedderResolver, vectors: dict[str, list[float]]) -> None:
        super().__init__(base.registry)
        self._base = base
        self._vectors = vectors

    def get(self, model_id: str) -> Embedder:
        return self._base.get(model_id)

    def query_embedder(self, model_id: str) -> Embedder:
        return _CachedEmbedder(self._base.query_embedder(model_id), self._vectors)


class _CachedEmbedder:
    def __init__(self, inner: Embedder, vectors: dict[str, list[float]]) -> None:
        self._inner = inner
        self._vectors = vectors

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    @property
    def dimensions(self) -> int:
        return self._inner.dimensions

    def __getattr__(self, name: str) -> Any:  # token_coverage and any other optional embedder method
        return getattr(self._inner, name)

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        missing = [text for text in dict.fromkeys(texts) if text not in self._vectors]
        if missing:
            self._vectors.update(zip(missing, await self._inner.embed(missing), strict=True))
        return [self._vectors[text] for text in texts]


async def _embed_queries(
    platform: Platform, texts: list[str], vector_model: str = LOCAL_EMBEDDING_MODEL_ID
) -> tuple[dict[str, list[float]], list[float]]:
    """Every query's vector (one call per query, as a search makes it) and the milliseconds each took."""
    embedder = platform.embedders.query_embedder(vector_model)
    vectors: dict[str, list[float]] = {}
    latencies: list[float] = []
    for text in texts:
        begun = time.perf_counter()
        vectors[text] = (await embedder.embed([text]))[0]
        latencies.append((time.perf_counter() - begun) * 1000)
    return vectors, latencies


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


async def _measure(
    platform: Platform,
    team_id: str,
    dataset_id: str,
    data_to_doc: dict[str, str],
    queries: dict[str, str],
    qrels: dict[str, dict[str, int]],
    setting: tuple[str, str | None, float | None],
) -> ModeResult:
    mode, fusion, weight = setting
    request: dict[str, Any] = {"datasetIds": [dataset_id], "searchMode": mode, "limit": 10**9}
    if fusion is not None and fusion != "default":
        request["fusion"] = "convex" if fusion.startswith("convex") else fusion
        if fusion.startswith("convex-"):
            request["convexNormalization"] = fusion.removeprefix("convex-")
    if weight is not None:
        request["embeddingWeight"] = weight
    scores_10, recalls, latencies = [], [], []
    for query_id, relevant in qrels.items():
        begun = time.perf_counter()
        found: Any = await platform.search.search(team_id, {**request, "queries": [queries[query_id]]})
        latencies.append((time.perf_counter() - begun) * 1000)
        ranked = list(dict.fromkeys(data_to_doc[item.id] for item in found.search_res))
        scores_10.append(ndcg_at_10(ranked, relevant))
        recalls.append(recall_at_100(ranked, relevant))
    return ModeResult(
        mode,
        round(statistics.fmean(scores_10), 4) if scores_10 else 0.0,
        round(statistics.fmean(recalls), 4) if recalls else 0.0,
        len(qrels),
        round(_percentile(latencies, 0.5), 2),
        round(_percentile(latencies, 0.95), 2),
        fusion,
        weight,
        round(statistics.stdev(scores_10) / math.sqrt(len(scores_10)), 4) if len(scores_10) > 1 else 0.0,
    )


async def _open(data_dir: Path) -> tuple[Platform, str]:
    platform = Platform.build(Settings(data_dir=data_dir, workers=0))
    boot = await platform.prepare()
    return platform, boot.team_id


async def run_retrieval_bench(
    dataset_dir: Path,
    *,
    split: str = "test",
    modes: Iterable[str] = MODES,
    max_docs: int | None = None,
    max_queries: int | None = None,
    throughput_docs: int = 300,
    data_dir: Path | None = None,
    embedding_weights: Sequence[float] = (0.5,),
    fusions: Sequence[str] = ("default",),
    vector_model: str = LOCAL_EMBEDDING_MODEL_ID,
    split_rule: str = DEFAULT_SPLIT_RULE,
) -> BenchResult:
    corpus = list(read_jsonl(dataset_dir / "corpus.jsonl"))[: max_docs or None]
    queries = {str(q["_id"]): str(q["text"]) for q in read_jsonl(dataset_dir / "queries.jsonl")}
    qrels = read_qrels(dataset_dir / "qrels" / f"{split}.tsv")
    kept = {str(doc["_id"]) for doc in corpus}
    qrels = {q: {d: g for d, g in rel.items() if d in kept} for q, rel in qrels.items() if q in queries}
    qrels = {q: qrels[q] for q in sorted(q for q, rel in qrels.items() if rel)[: max_queries or None]}
    manifest = (
        read_manifest(data_dir, dataset_dir, len(corpus), max_docs, vector_model, split_rule)
        if data_dir
        else None
    )

    with tempfile.TemporaryDirectory(prefix="fathom-bench-") as tmp:
        platform, team_id = await _open(data_dir or Path(tmp))
        try:
            started = time.perf_counter()
            if manifest is not None:
                if manifest.get("teamId") != team_id:
                    raise BenchDataDirError(f"--data-dir {data_dir}: its team is not the manifest's")
                dataset_id, data_to_doc = str(manifest["datasetId"]), dict(manifest["dataToDoc"])
            else:
                dataset_id, data_to_doc = await _ingest_corpus(
                    platform, team_id, corpus, vector_model, split_rule
                )
                if data_dir is not None:
                    key = _manifest_key(dataset_dir, len(corpus), max_docs, vector_model, split_rule)
                    record = {**key, "datasetId": dataset_id, "teamId": team_id, "dataToDoc": data_to_doc}
                    (data_dir / MANIFEST).write_text(json.dumps(record), encoding="utf-8")
            result = BenchResult(
                dataset_dir.name,
                split,
                len(corpus),
                time.perf_counter() - started,
                manifest is not None,
                vector_model,
                split_rule,
            )
            texts = list(dict.fromkeys(queries[q] for q in qrels))
            vectors, embed_ms = await _embed_queries(platform, texts, vector_model)
            result.query_embedding = {
                "p50_ms": round(_percentile(embed_ms, 0.5), 2),
                "p95_ms": round(_percentile(embed_ms, 0.95), 2),
            }
            platform.search.embedders = _QueryVectorResolver(platform.embedders, vectors)
            for setting in _search_settings(modes, fusions, embedding_weights):
                result.modes.append(
                    await _measure(platform, team_id, dataset_id, data_to_doc, queries, qrels, setting)
                )
            platform.search.embedders = platform.embedders
            if throughput_docs:
                if data_dir is None:
                    result.ingestion = await _ingestion_throughput(
                        platform, team_id, corpus[:throughput_docs]
                    )
                else:  # keep the reusable folder free of the throughput run's knowledge base
                    with tempfile.TemporaryDirectory(prefix="fathom-bench-") as scratch:
                        other, other_team = await _open(Path(scratch))
                        try:
                            result.ingestion = await _ingestion_throughput(
                                other, other_team, corpus[:throughput_docs]
                            )
                        finally:
                            await other.close()
            return result
        finally:
            await platform.close()
