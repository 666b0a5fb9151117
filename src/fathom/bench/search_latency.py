"""Search latency over a large synthetic knowledge base, through the real store and search pipeline.

The corpus is synthetic but shaped like prose: a vocabulary of pronounceable made-up words drawn with a Zipf
distribution (a few very common words, a long tail), sentences of 6–18 words, chunks of 60–120 words. Every
chunk gets one random unit vector (384 dimensions, the local model's size). Chunks are written through
``SqlChunkRepository.write_chunks`` in large batches into one knowledge base; queries run through
``DatasetSearchService.search`` with precomputed query vectors, so the query embedding is excluded from the
search latency and measured on its own with the local model.
"""

from __future__ import annotations

import gc
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import text as sql

from fathom.datasets import DatasetSearchService, EmbedderResolver
from fathom.knowledge.tokenize import segment_for_index
from fathom.llm import count_tokens
from fathom.store import migrate
from fathom.store.db import Database
from fathom.store.knowledge import SqlChunkRepository, SqlDatasetRepository, SqlFullTextIndex, SqlVectorIndex
from fathom.store.knowledge.index_rows import ensure_hnsw_index
from fathom.store.protocols import ChunkToWrite
from fathom.store.repositories import SqlTeamRepository

MODES = ("embedding", "fullTextRecall", "mixedRecall")
DIMENSIONS = 384
MODEL_ID = "bench/random-384"
WRITE_BATCH = 2000
_SYLLABLES = [c + v for c in "bcdfghjklmnprstvwz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]


@dataclass
class ModeLatency:
    mode: str
    queries: int
    p50_ms: float
    p95_ms: float
    mean_ms: float
    cpu_p50_ms: float  # process CPU time (all threads): what the latency would be on an idle machine
    mean_results: float


@dataclass
class LatencyResult:
    backend: str
    chunks: int
    load_seconds: float
    modes: list[ModeLatency] = field(default_factory=list)
    query_embedding: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "chunks": self.chunks,
            "loadSeconds": round(self.load_seconds, 1),
            "modes": [vars(m) for m in self.modes],
            "queryEmbedding": self.query_embedding,
        }


class SyntheticCorpus:
    """Reproducible Zipf-distributed prose and random unit vectors."""

    def __init__(self, seed: int = 7, vocabulary: int = 30000, zipf_s: float = 1.07) -> None:
        self.rng = np.random.default_rng(seed)
        words: set[str] = set()
        while len(words) < vocabulary:
            size = int(self.rng.integers(1, 5))
            words.add("".join(self.rng.choice(_SYLLABLES, size=size)))
        self.words = np.array(sorted(words, key=len))  # short words are the common ones, as in English
        ranks = np.arange(1, vocabulary + 1, dtype=np.float64)
        weights = ranks**-zipf_s
        self.cdf = np.cumsum(weights / weights.sum())

    def _draw(self, n: int) -> np.ndarray:
        indexes = np.searchsorted(self.cdf, self.rng.random(n))
        return self.words[np.minimum(indexes, len(self.words) - 1)]

    def chunk(self) -> str:
        total = int(self.rng.integers(60, 121))
        drawn = self._draw(total)
        sentences, start = [], 0
        while start < total:
            length = min(total - start, int(self.rng.integers(6, 19)))
            words = drawn[start : start + length]
            sentences.append(" ".join(words).capitalize() + ".")
            start += length
        return " ".join(sentences)

    def query(self) -> str:
        """3–6 words, mostly from the middle of the vocabulary (people search for topic words)."""
        count = int(self.rng.integers(3, 7))
        ranks = self.rng.integers(50, 5000, size=count)
        return " ".join(self.words[ranks])

    def vectors(self, n: int) -> np.ndarray:
        matrix = self.rng.standard_normal((n, DIMENSIONS)).astype(np.float32)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix


class PrecomputedEmbedder:
    """An ``Embedder`` that answers each query text with its precomputed vector."""

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        self.vectors = vectors

    @property
    def model_id(self) -> str:
        return MODEL_ID

    @property
    def dimensions(self) -> int:
        return DIMENSIONS

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.vectors[text] for text in texts]


class _Resolver(EmbedderResolver):
    def __init__(self, embedder: PrecomputedEmbedder) -> None:
        super().__init__(None)
        self.embedder = embedder

    def get(self, model_id: str) -> Any:
        return self.embedder


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


async def load_corpus(
    db: Database, corpus: SyntheticCorpus, chunks: int, *, progress: Any = None
) -> tuple[str, str, float]:
    """Create a team and one knowledge base holding ``chunks`` synthetic chunks: (team, dataset, seconds)."""
    team = await SqlTeamRepository(db).create_team("bench")
    datasets = SqlDatasetRepository(db)
    dataset = await datasets.create_dataset(team.id, "latency", vector_model=MODEL_ID)
    collection = await datasets.create_collection(team.id, dataset.id, "synthetic", type="virtual")
    repository = SqlChunkRepository(db, segment_for_index)
    started = time.perf_counter()
    for start in range(0, chunks, WRITE_BATCH):
        size = min(WRITE_BATCH, chunks - start)
        vectors = corpus.vectors(size)
        writes = []
        for offset in range(size):
            text = corpus.chunk()
            writes.append(  # with its token count, as ingestion writes chunks
                ChunkToWrite(
                    text, "", start + offset, [text], [vectors[offset].tolist()], tokens=count_tokens(text)
                )
            )
        await repository.write_chunks(team.id, dataset.id, collection.id, writes, model=MODEL_ID)
        if db.is_postgres and start == 0:
            # bulk loading: build the HNSW index once at the end instead of inserting row by row
            async with db.engine.begin() as conn:
                await conn.execute(sql(f"DROP INDEX IF EXISTS ix_data_indexes_hnsw_{DIMENSIONS}"))
        if progress is not None:
            progress(start + size, time.perf_counter() - started)
    await datasets.set_collection_state(collection.id, "ready", chunks_total=chunks, chunks_done=chunks)
    if db.is_postgres:
        async with db.engine.begin() as conn:
            await conn.execute(sql("SET LOCAL maintenance_work_mem = '1GB'"))
            await ensure_hnsw_index(conn, DIMENSIONS)  # type: ignore[arg-type]
            await conn.execute(sql("ANALYZE"))
    return team.id, dataset.id, time.perf_counter() - started


async def measure_modes(
    db: Database,
    team_id: str,
    dataset_id: str,
    queries: dict[str, list[float]],
    modes: Sequence[str] = MODES,
    *,
    limit: int = 5000,
) -> list[ModeLatency]:
    """p50/p95 of ``DatasetSearchService.search`` per mode (one warm-up query each, not counted)."""
    service = DatasetSearchService(
        SqlDatasetRepository(db),
        SqlChunkRepository(db, segment_for_index),
        SqlFullTextIndex(db, segment_for_index),
        SqlVectorIndex(db),
        _Resolver(PrecomputedEmbedder(queries)),
        count_tokens=count_tokens,  # as the platform wires it
    )
    texts = list(queries)
    results = []
    for mode in modes:
        params = {"queries": [texts[0]], "datasetIds": [dataset_id], "searchMode": mode, "limit": limit}
        await service.search(team_id, params)  # warm-up: loads the in-memory matrix on SQLite
        latencies, cpu, found = [], [], []
        for text in texts:
            params["queries"] = [text]
            begun, begun_cpu = time.perf_counter(), time.process_time()
            result = await service.search(team_id, params)
            latencies.append((time.perf_counter() - begun) * 1000)
            cpu.append((time.process_time() - begun_cpu) * 1000)
            found.append(len(result.search_res))
        results.append(
            ModeLatency(
                mode,
                len(texts),
                round(percentile(latencies, 0.5), 2),
                round(percentile(latencies, 0.95), 2),
                round(statistics.fmean(latencies), 2),
                round(percentile(cpu, 0.5), 2),
                round(statistics.fmean(found), 1),
            )
        )
    return results


async def measure_query_embedding(texts: Sequence[str]) -> dict[str, float]:
    """The local model's time to embed one query (the part the search latency excludes)."""
    from fathom.llm.local_embedding import LocalEmbedder

    embedder = LocalEmbedder()
    await embedder.embed(["warm up"])
    latencies = []
    for text in texts:
        begun = time.perf_counter()
        await embedder.embed([text])
        latencies.append((time.perf_counter() - begun) * 1000)
    return {
        "queries": float(len(texts)),
        "p50_ms": round(percentile(latencies, 0.5), 2),
        "p95_ms": round(percentile(latencies, 0.95), 2),
    }


async def run_search_latency(
    backend: str,
    *,
    chunks: int = 100_000,
    queries: int = 200,
    modes: Sequence[str] = MODES,
    embed_queries: bool = True,
    seed: int = 7,
    progress: Any = None,
) -> LatencyResult:
    """Load ``chunks`` synthetic chunks into a fresh database (``sqlite`` or ``postgres``, embedded) and time
    ``queries`` searches per mode."""
    corpus = SyntheticCorpus(seed)
    with tempfile.TemporaryDirectory(prefix="fathom-latency-") as tmp:
        server: Any = None
        if backend == "postgres":
            from fathom.store.pg_embedded import EmbeddedPostgres

            server = EmbeddedPostgres()
            server.start()
            url = server.create_database("latency")
        elif backend == "sqlite":
            url = f"sqlite:///{Path(tmp) / 'fathom.db'}"
        else:
            raise ValueError(f"backend: {backend!r} is not sqlite or postgres")
        db = Database(url)
        try:
            await migrate.upgrade(db)
            team_id, dataset_id, seconds = await load_corpus(db, corpus, chunks, progress=progress)
            texts = list(dict.fromkeys(corpus.query() for _ in range(queries * 2)))[:queries]
            vectors = corpus.vectors(len(texts))
            query_vectors = {text: vectors[i].tolist() for i, text in enumerate(texts)}
            result = LatencyResult(backend, chunks, seconds)
            gc.collect()
            gc.freeze()  # as `fathom serve` does once started: start-up objects leave the full GC passes
            result.modes = await measure_modes(db, team_id, dataset_id, query_vectors, modes)
            if embed_queries:
                result.query_embedding = await measure_query_embedding(texts)
            return result
        finally:
            await db.close()
            if server is not None:
                server.stop()
