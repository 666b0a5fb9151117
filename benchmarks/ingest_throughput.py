"""Ingestion throughput against the embedding model's raw throughput on the same texts, by CPU time.

    .venv/bin/python benchmarks/ingest_throughput.py [--docs 300] [--rounds 5] [--warmup 1]
        [--dataset ../shared/datasets/scifact]

The workload of ``fathom bench retrieval --throughput-docs``: the first ``--docs`` SciFact documents as one
long Markdown document (``## title`` + abstract). Each round, in an order alternating by round:

- ``raw``: the local embedding model (``LocalEmbedder``, the one ingestion uses) on the index texts of the
  document's chunks, in the calls ingestion makes: the index texts of ``EMBED_BATCH_SIZE`` (32) chunks per
  call, each call's batches sorted by length (as every call is), so both sides embed the same texts in
  the same batches with the same padding;
- ``pipeline``: the same document through the job pipeline into a fresh knowledge base of the same process
  (parse, chunk, embed, transactional writes of chunk rows, full-text rows and vectors), run by one worker
  until idle.

``--warmup`` rounds (default 1) run first and are not counted: the process's first knowledge base and
collection job pay one-off costs (first use of the code paths, the database's first pages).

What counts is this process's CPU time (``time.process_time``: every thread, the model's included) over
each part; the ratio is pipeline chunks per CPU-second over raw chunks per CPU-second. Wall-clock ratios
are printed too (on a shared machine they move with the other processes' load).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from fathom.config import Settings
from fathom.datasets.chunking import split_collection_text
from fathom.datasets.ingest import EMBED_BATCH_SIZE
from fathom.knowledge.chunk_settings import split_chunk_indexes
from fathom.llm.local_embedding import LOCAL_EMBEDDING_MODEL_ID
from fathom.platform import Platform

SCIFACT = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "scifact"


def long_document(dataset: Path, docs: int) -> str:
    with (dataset / "corpus.jsonl").open() as lines:
        rows = [json.loads(line) for line in itertools.islice(lines, docs)]
    return "\n\n".join(f"## {row.get('title', '')}\n\n{row.get('text', '')}" for row in rows)


async def run(text: str, rounds: int, warmup: int) -> list[dict[str, float]]:
    with tempfile.TemporaryDirectory(prefix="fathom-ingest-bench-") as tmp:
        platform = Platform.build(Settings(data_dir=Path(tmp), workers=0, seed_demo=False))
        team_id = (await platform.prepare()).team_id
        try:
            embedder = platform.embedders.get(LOCAL_EMBEDDING_MODEL_ID)
            settings = platform.embedders.chunk_settings(LOCAL_EMBEDDING_MODEL_ID)
            chunks = split_collection_text(text, settings, qa_pairs=False)  # as ingestion splits it
            calls = [  # as ingestion's ``_embed_batch`` calls the model
                [
                    t
                    for q, a in chunks[start : start + EMBED_BATCH_SIZE]
                    for t in split_chunk_indexes(q, a, settings) or [q]
                ]
                for start in range(0, len(chunks), EMBED_BATCH_SIZE)
            ]
            await embedder.embed(calls[0])  # the model loaded

            async def raw() -> tuple[float, float, int]:
                cpu, wall = time.process_time(), time.perf_counter()
                for texts in calls:
                    await embedder.embed(texts)
                return time.process_time() - cpu, time.perf_counter() - wall, len(chunks)

            async def pipeline(number: int) -> tuple[float, float, int]:
                dataset = await platform.datasets.create_dataset(
                    team_id, f"throughput {number}", vector_model=LOCAL_EMBEDDING_MODEL_ID
                )
                collection = await platform.datasets.create_collection(
                    team_id, dataset.id, "long", type="virtual", raw_text=text
                )
                await platform.ingestion.enqueue(collection)
                cpu, wall = time.process_time(), time.perf_counter()
                await platform.new_worker().run_until_idle()
                cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
                done = await platform.datasets.get_collection(team_id, collection.id)
                return cpu, wall, int(done.chunks_done)

            results = []
            for number in range(warmup + rounds):
                parts: dict[str, tuple[float, float, int]] = {}
                for name in ("raw", "pipeline") if number % 2 == 0 else ("pipeline", "raw"):
                    parts[name] = await raw() if name == "raw" else await pipeline(number)
                (raw_cpu, raw_wall, raw_chunks), (cpu, wall, done) = parts["raw"], parts["pipeline"]
                if number < warmup:
                    print(f"warm-up round {number + 1} (not counted)", flush=True)
                    continue
                row = {
                    "chunks": done,
                    "rawChunksPerCpuSecond": raw_chunks / raw_cpu,
                    "pipelineChunksPerCpuSecond": done / cpu,
                    "cpuRatio": (done / cpu) / (raw_chunks / raw_cpu),
                    "wallRatio": (done / wall) / (raw_chunks / raw_wall),
                }
                first = "raw" if number % 2 == 0 else "pipeline"
                print(
                    f"round {number + 1 - warmup} ({first} first): {done} chunks; raw "
                    f"{row['rawChunksPerCpuSecond']:.2f}, pipeline {row['pipelineChunksPerCpuSecond']:.2f} "
                    f"chunks per CPU-s: ratio {row['cpuRatio']:.3f} "
                    f"(wall {row['wallRatio']:.3f})",
                    flush=True,
                )
                results.append(row)
            return results
        finally:
            await platform.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1, help="rounds run first and not counted")
    parser.add_argument("--dataset", type=Path, default=SCIFACT)
    parser.add_argument("--json", type=Path, help="also write the rounds here")
    args = parser.parse_args()
    results = asyncio.run(run(long_document(args.dataset, args.docs), args.rounds, args.warmup))

    def spread(key: str) -> str:
        values = [row[key] for row in results]
        return f"{min(values):.3f} / {statistics.median(values):.3f} / {max(values):.3f}"

    print(f"\npipeline / raw chunks per CPU-second, min / median / max: {spread('cpuRatio')}")
    print(f"the same by wall clock: {spread('wallRatio')}")
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    if args.json:
        summary: dict[str, Any] = {"rounds": results}
        args.json.write_text(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
