"""Search latency over a large synthetic knowledge base, through the real store and search pipeline.

The corpus is synthetic but shaped like prose: a vocabulary of pronounceable made-up words drawn with a Zipf
distribution (a few very common words, a long tail), sentences of 6–18 words, chunks of 60–120 words. Every
chunk gets one unit vector (384 dimensions, the local model's size) drawn around a topic and a subtopic
centre, so vectors have neighbourhoods as real embeddings do (``SyntheticCorpus.vectors``). Chunks are
written through ``SqlChunkRepository.write_chunks`` in large batches into one knowledge base; queries run
through ``DatasetSearchService.search`` with precomputed query vectors, so the query embedding is excluded
from the search latency and measured on its own with the local model. ``keep`` keeps the loaded database
for the next run; on PostgreSQL the recall of the fast search paths against exact ones is measured too
(``fathom.bench.search_recall``).
"""

from __future__ import annotations

import gc
import os
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import text as sql

from fathom.bench.search_recall import RecallResult, measure_recall
from fathom.datasets import DatasetSearchService, EmbedderResolver
from fathom.gc_tuning import tune_garbage_collector
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
TOPICS, SUBTOPICS = 200, 20  # of the synthetic vectors: 500 chunks per topic, 25 per subtopic
# PostgreSQL's default shared_buffers (128 MB) does not hold the 100k-vector HNSW index; 25% of RAM is the
# usual advice for a database server
PG_SETTINGS = {"shared_buffers": "1GB"}
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
    round_p50_ms: list[float] = field(default_factory=list)  # each round's p50 (``repeats`` rounds)
    server_cpu_mean_ms: float | None = None  # PostgreSQL: the server's CPU time per search (the mean over
    # each round: the kernel counts CPU time in 10 ms ticks, too coarse for a per-search median)


@dataclass
class LatencyResult:
    backend: str
    chunks: int
    load_seconds: float
    modes: list[ModeLatency] = field(default_factory=list)
    query_embedding: dict[str, float] = field(default_factory=dict)
    recall: RecallResult | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "chunks": self.chunks,
            "loadSeconds": round(self.load_seconds, 1),
            "modes": [vars(m) for m in self.modes],
            "queryEmbedding": self.query_embedding,
            "recall": vars(self.recall) if self.recall else None,
        }


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    rows = matrix.astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


class SyntheticCorpus:
    """Reproducible Zipf-distributed prose and random unit vectors."""

    def __init__(self, seed: int = 7, vocabulary: int = 30000, zipf_s: float = 1.07) -> None:
        self.rng = np.random.default_rng(seed)
        words: set[str] = set()
        while len(words) < vocabulary:
            size = int(self.rng.integers(1, 5))
            words.add("".join(self.rng.choice(_SYLLABLES, size=size)))
        # short words are the common ones, as in English; ties in alphabetical order, not the set's (which
        # follows the per-process string hash seed: another process drew other queries and another corpus)
        self.words = np.array(sorted(words, key=lambda word: (len(word), word)))
        ranks = np.arange(1, vocabulary + 1, dtype=np.float64)
        weights = ranks**-zipf_s
        self.cdf = np.cumsum(weights / weights.sum())
        self.topic_centres = _unit_rows(self.rng.standard_normal((TOPICS, DIMENSIONS)))
        self.subtopic_centres = _unit_rows(self.rng.standard_normal((TOPICS * SUBTOPICS, DIMENSIONS)))

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

    def query(self, rng: np.random.Generator) -> str:
        """3–6 words, mostly from the middle of the vocabulary (people search for topic words)."""
        count = int(rng.integers(3, 7))
        ranks = rng.integers(50, 5000, size=count)
        return " ".join(self.words[ranks])

    def vectors(self, n: int, rng: np.random.Generator | None = None) -> np.ndarray:
        """Unit vectors with the neighbourhoods of real embeddings: each is a topic's centre plus one of its
        subtopics' centres plus noise (cosine about 0.86 within a subtopic, 0.58 within a topic, 0 across).
        Independent random vectors would have none: their nearest neighbours are barely nearer than the
        rest, which no approximate index (nor a real embedding model) produces."""
        draw = rng or self.rng
        topics = draw.integers(0, TOPICS, size=n)
        subtopics = topics * SUBTOPICS + draw.integers(0, SUBTOPICS, size=n)
        noise = draw.standard_normal((n, DIMENSIONS)).astype(np.float32) * (0.5 / np.sqrt(DIMENSIONS))
        matrix = self.topic_centres[topics] + 0.7 * self.subtopic_centres[subtopics] + noise
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


def _percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


async def _load_corpus(
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
            # bulk loading: build the HNSW and GIN indexes once at the end instead of row by row
            async with db.engine.begin() as conn:
                await conn.execute(sql(f"DROP INDEX IF EXISTS ix_data_indexes_hnsw_{DIMENSIONS}"))
                await conn.execute(sql("DROP INDEX IF EXISTS ix_data_fts_tsv"))
        if progress is not None:
            progress(start + size, time.perf_counter() - started)
    await datasets.set_collection_state(collection.id, "ready", chunks_total=chunks, chunks_done=chunks)
    if db.is_postgres:
        async with db.engine.begin() as conn:
            await conn.execute(sql("SET LOCAL maintenance_work_mem = '1GB'"))
            await ensure_hnsw_index(conn, DIMENSIONS)  # type: ignore[arg-type]
            # as migrations 0002 and 0009 define it
            await conn.execute(
                sql("CREATE INDEX ix_data_fts_tsv ON data_fts USING gin (tsv) WITH (fastupdate = off)")
            )
            await conn.execute(sql("ANALYZE"))
    return team.id, dataset.id, time.perf_counter() - started


async def _stored_corpus(db: Database, chunks: int) -> tuple[str, str] | None:
    """(team, dataset) of a corpus a previous run left in this database, None when there is none."""
    rows = await db.read(
        "SELECT d.team_id, d.id, (SELECT count(*) FROM data_chunks c WHERE c.dataset_id = d.id) "
        "FROM datasets d WHERE d.name = 'latency'"
    )
    if not rows:
        return None
    team_id, dataset_id, stored = rows[0]
    if int(stored) != chunks:
        raise ValueError(f"the kept database holds {stored} chunks, not {chunks}: remove its folder")
    return str(team_id), str(dataset_id)


def _query_set(corpus: SyntheticCorpus, count: int, seed: int) -> dict[str, list[float]]:
    """``count`` distinct query texts with their random query vectors (independent of the corpus's draws,
    so a kept corpus is searched with the same queries as a fresh one)."""
    rng = np.random.default_rng(seed + 1)
    texts = list(dict.fromkeys(corpus.query(rng) for _ in range(count * 2)))[:count]
    vectors = corpus.vectors(len(texts), rng)
    return {text: vectors[i].tolist() for i, text in enumerate(texts)}


def _search_service(db: Database, queries: dict[str, list[float]]) -> DatasetSearchService:
    return DatasetSearchService(
        SqlDatasetRepository(db),
        SqlChunkRepository(db, segment_for_index),
        SqlFullTextIndex(db, segment_for_index),
        SqlVectorIndex(db),
        _Resolver(PrecomputedEmbedder(queries)),
        count_tokens=count_tokens,  # as the platform wires it
    )


def _backends_cpu(server_pid: int) -> float:
    """CPU seconds (utime + stime) of a PostgreSQL server's client backends (its children serving a TCP
    connection: not the checkpointer, autovacuum and the other background processes)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()  # [1] the parent, [11:13] utime stime
            if int(fields[1]) != server_pid or b"127.0.0.1(" not in (stat.parent / "cmdline").read_bytes():
                continue
        except OSError:  # the process ended
            continue
        total += int(fields[11]) + int(fields[12])
    return total / tick


async def _measure_modes(
    db: Database,
    team_id: str,
    dataset_id: str,
    queries: dict[str, list[float]],
    modes: Sequence[str] = MODES,
    *,
    limit: int = 5000,
    repeats: int = 3,
    server_pid: int | None = None,
    search_test: bool = False,
) -> list[ModeLatency]:
    """p50/p95 of ``DatasetSearchService.search`` per mode over ``repeats`` rounds (the modes rotated
    round by round; one warm-up query per mode, not counted). ``server_pid``: the PostgreSQL server,
    whose backends' CPU time per search is reported too. The search timed is the one a chat's search node
    runs (no removed item kept); ``search_test``: the console's search test's (every removed item traced)."""
    service = _search_service(db, queries)
    texts = list(queries)
    samples: dict[str, dict[str, list[float]]] = {m: {} for m in modes}
    for mode in modes:
        params = {"queries": [texts[0]], "datasetIds": [dataset_id], "searchMode": mode, "limit": limit}
        await service.search(team_id, params, keep_cut=search_test)  # warm-up: SQLite's in-memory matrix
    for round_ in range(repeats):
        for mode in [*modes[round_ % len(modes) :], *modes[: round_ % len(modes)]]:
            params = {"datasetIds": [dataset_id], "searchMode": mode, "limit": limit}
            got = samples[mode]
            round_latencies = []
            # the server's CPU over the whole round, not around each search: a scan of /proc costs ~2 ms
            # of this process's CPU, and two per search made the client look CPU-bound to the scheduler
            # (its searches were preempted more often on a loaded machine)
            server_begun = _backends_cpu(server_pid) if server_pid else 0.0
            for text in texts:
                params["queries"] = [text]
                begun, begun_cpu = time.perf_counter(), time.process_time()
                result = await service.search(team_id, params, keep_cut=search_test)
                round_latencies.append((time.perf_counter() - begun) * 1000)
                got.setdefault("cpu", []).append((time.process_time() - begun_cpu) * 1000)
                got.setdefault("found", []).append(len(result.search_res))
            if server_pid:  # the round's mean per search
                spent = (_backends_cpu(server_pid) - server_begun) * 1000
                got.setdefault("server", []).append(spent / len(texts))
            got.setdefault("wall", []).extend(round_latencies)
            got.setdefault("round_p50", []).append(_percentile(round_latencies, 0.5))
    return [
        ModeLatency(
            mode,
            len(texts),
            round(_percentile(got["wall"], 0.5), 2),
            round(_percentile(got["wall"], 0.95), 2),
            round(statistics.fmean(got["wall"]), 2),
            round(_percentile(got["cpu"], 0.5), 2),
            round(statistics.fmean(got["found"]), 1),
            [round(p, 2) for p in got["round_p50"]],
            round(statistics.fmean(got["server"]), 2) if got.get("server") else None,
        )
        for mode, got in samples.items()
    ]


async def _measure_query_embedding(texts: Sequence[str]) -> dict[str, float]:
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
        "p50_ms": round(_percentile(latencies, 0.5), 2),
        "p95_ms": round(_percentile(latencies, 0.95), 2),
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
    keep: Path | None = None,
    repeats: int = 3,
    recall_queries: int = 50,
    search_test: bool = False,
) -> LatencyResult:
    """Load ``chunks`` synthetic chunks into a fresh database (``sqlite`` or ``postgres``, embedded) and time
    ``queries`` searches per mode. ``keep``: a folder for the database, kept after the run; a later run with
    the same folder searches the corpus it holds instead of loading it again; ``search_test``: time the
    search test's search instead of a chat's (see ``_measure_modes``). On PostgreSQL the recall of
    the fast search paths against exact ones is measured on the first ``recall_queries`` queries."""
    corpus = SyntheticCorpus(seed)
    with tempfile.TemporaryDirectory(prefix="fathom-latency-") as tmp:
        folder = keep or Path(tmp)
        server: Any = None
        if backend == "postgres":
            from fathom.store.pg_embedded import EmbeddedPostgres

            server = EmbeddedPostgres(root=keep, settings=PG_SETTINGS)
            server.start()
            url = server.create_database("latency")
        elif backend == "sqlite":
            folder.mkdir(parents=True, exist_ok=True)
            url = f"sqlite:///{folder / 'fathom.db'}"
        else:
            raise ValueError(f"backend: {backend!r} is not sqlite or postgres")
        db = Database(url)
        try:
            await migrate.upgrade(db)
            stored = await _stored_corpus(db, chunks)
            if stored is None:
                team_id, dataset_id, seconds = await _load_corpus(db, corpus, chunks, progress=progress)
            else:
                (team_id, dataset_id), seconds = stored, 0.0
            query_vectors = _query_set(corpus, queries, seed)
            texts = list(query_vectors)
            result = LatencyResult(backend, chunks, seconds)
            # as `fathom serve` does once started: start-up objects leave the full GC passes, and the
            # young generation is collected every GC_YOUNG_THRESHOLD allocations instead of 700
            thresholds = tune_garbage_collector()
            try:
                result.modes = await _measure_modes(
                    db,
                    team_id,
                    dataset_id,
                    query_vectors,
                    modes,
                    repeats=repeats,
                    server_pid=server.pid if server is not None else None,
                    search_test=search_test,
                )
            finally:
                gc.set_threshold(*thresholds)
            if server is not None and recall_queries > 0:
                sample = dict(list(query_vectors.items())[:recall_queries])
                resolver = _Resolver(PrecomputedEmbedder(query_vectors))
                result.recall = await measure_recall(db, team_id, dataset_id, sample, resolver)
            if embed_queries:
                result.query_embedding = await _measure_query_embedding(texts)
            return result
        finally:
            await db.close()
            if server is not None:
                server.stop()
