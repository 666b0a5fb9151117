"""The search pipeline's own Python: CPU per mixedRecall search with its storage calls answered at once.

    PYTHONPATH=src .venv/bin/python benchmarks/search_pipeline.py --keep DIR [--before CHECKOUT]
        [--queries 60] [--rounds 3] [--repeats 5]

A knowledge-base search spends its time in four places: the query's embedding, the vector scan, the
full-text query and the pipeline's own Python around them (each hit made a result item with its score and
trace, the legs fused, deduped, filtered and cut to the token budget; ~140 items a mixedRecall search). The
first three are measured by ``fathom bench search-latency``; on a shared 2-core machine their noise hides a
millisecond of the fourth. This benchmark isolates it: it searches ``--queries`` queries once through
``DatasetSearchService.search`` on the 100k-chunk SQLite corpus of ``fathom bench search-latency`` (loaded
into ``--keep`` when that folder does not hold it yet, ~30 s), records every vector hit list, full-text hit
list and chunk row the searches read, then, in a fresh process per contender, runs
``search_dataset_data`` over those recordings (hits and rows answered from memory; the rows become result
items as ``ChunkStoreAdapter`` makes them) ``--repeats`` times per query. Two contenders per code: the
search searchTest runs (``keep_cut`` True: the items a stage removes come back traced) and the one a
workflow's search node runs (``keep_cut`` False, where the code has it). With ``--before`` the same runs of
another checkout's code alternate with this one's, round by round. CPU is ``time.process_time`` per
search (garbage collector tuned as ``fathom serve`` tunes it); the report gives each round's median and
min / median / max of the ratios to the first contender of the older code.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()


async def record(keep: Path, queries: int) -> dict[str, Any]:
    """Search ``queries`` queries on the kept corpus (folder ``keep``): the hits and rows they read."""
    from fathom.bench import search_latency as bench
    from fathom.store import migrate
    from fathom.store.db import Database

    db = Database(f"sqlite:///{keep / 'fathom.db'}")
    await migrate.upgrade(db)
    corpus = bench.SyntheticCorpus(7)
    stored = await bench._stored_corpus(db, 100_000)
    team_id, dataset_id = stored if stored else (await bench._load_corpus(db, corpus, 100_000))[:2]
    vectors = bench._query_set(corpus, queries, 7)
    service = bench._search_service(db, vectors)
    taken: dict[str, Any] = {"vector": {}, "text": {}, "rows": {}, "vectors": vectors, "dataset": dataset_id}
    vector_search, text_search, rows_of = (
        service.vectors.search,
        service.full_text.search,
        service.chunk_store.chunks.get_many,
    )
    now: dict[str, str] = {}

    async def vector(vector: Any, limit: int, scope: Any) -> Any:
        taken["vector"][now["query"]] = hits = list(await vector_search(vector, limit, scope))
        return hits

    async def text(query: str, limit: int, scope: Any) -> Any:
        taken["text"][query] = hits = list(await text_search(query, limit, scope))
        return hits

    async def rows(ids: Any) -> Any:
        found = await rows_of(ids)
        taken["rows"].update(found)
        return found

    service.vectors.search, service.full_text.search = vector, text  # type: ignore[method-assign]
    service.chunk_store.chunks.get_many = rows  # type: ignore[method-assign]
    for query in vectors:
        now["query"] = query
        body = {"queries": [query], "datasetIds": [dataset_id], "searchMode": "mixedRecall", "limit": 5000}
        await service.search(team_id, body)
    await db.close()
    return taken


async def measure(taken: dict[str, Any], keep_cut: bool, repeats: int) -> float:
    """Median CPU ms of ``search_dataset_data`` over the recordings (this process's code)."""
    from fathom.datasets.search import ChunkStoreAdapter
    from fathom.gc_tuning import tune_garbage_collector
    from fathom.knowledge.search import search_dataset_data
    from fathom.llm import count_tokens

    now: dict[str, str] = {}

    class Recorded:
        model_id = "bench/random-384"

        async def embed(self, texts: list[str]) -> list[list[float]]:
            return [taken["vectors"][text] for text in texts]

        async def search(self, query: Any, limit: int, scope: Any) -> Any:
            return taken["text"][query] if isinstance(query, str) else taken["vector"][now["query"]]

        async def get_many(self, ids: Any) -> Any:
            return {data_id: taken["rows"][data_id] for data_id in ids if data_id in taken["rows"]}

    source = Recorded()
    store = ChunkStoreAdapter(source)  # type: ignore[arg-type]
    extra = {"keep_cut": keep_cut} if "keep_cut" in inspect.signature(search_dataset_data).parameters else {}
    if not keep_cut and not extra:
        return float("nan")  # this code has no search without the cut items
    tune_garbage_collector()
    spent: list[float] = []
    for _ in range(repeats):
        for query in taken["vectors"]:
            now["query"] = query
            body = {"queries": [query], "datasetIds": [taken["dataset"]], "searchMode": "mixedRecall"}
            began = time.process_time()
            await search_dataset_data(
                {**body, "limit": 5000},
                embedder=source,
                full_text_index=source,  # type: ignore[arg-type]
                vector_index=source,  # type: ignore[arg-type]
                chunk_store=store,
                count_tokens=count_tokens,
                **extra,
            )
            spent.append(time.process_time() - began)
    return statistics.median(spent) * 1000


def run_contender(src: Path, recorded: Path, keep_cut: bool, repeats: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(src)}
    args = [sys.executable, str(HERE), "--measure", str(recorded), "--repeats", str(repeats)]
    if keep_cut:
        args.append("--keep-cut")
    done = subprocess.run(args, env=env, capture_output=True, text=True, check=True)
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="the search-latency corpus folder (loaded when absent)")
    parser.add_argument("--before", type=Path, help="another checkout, alternated round by round")
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5, help="searches per query and contender")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--keep-cut", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        taken = pickle.loads(args.measure.read_bytes())
        print(asyncio.run(measure(taken, args.keep_cut, args.repeats)))
        return
    if args.keep is None:
        parser.error("--keep: a folder for the 100k-chunk corpus")
    with tempfile.TemporaryDirectory() as tmp:
        recorded = Path(tmp) / "recorded.pickle"
        args.keep.mkdir(parents=True, exist_ok=True)
        recorded.write_bytes(pickle.dumps(asyncio.run(record(args.keep, args.queries))))
        codes = [("before", args.before / "src")] if args.before else []
        codes.append(("this", HERE.parents[1] / "src"))
        contenders = [
            (f"{name}, {label}", src, keep)
            for name, src in codes
            for label, keep in (("searchTest (cut kept)", True), ("search node (no cut)", False))
        ]
        results: dict[str, list[float]] = {name: [] for name, _, _ in contenders}
        for round_ in range(args.rounds):
            order = contenders[round_ % len(contenders) :] + contenders[: round_ % len(contenders)]
            for name, src, keep in order:
                results[name].append(run_contender(src, recorded, keep, args.repeats))
            print(
                f"round {round_ + 1}: " + ", ".join(f"{n} {results[n][-1]:.3f} ms" for n, _, _ in contenders)
            )
    shape = f"{args.queries} queries x {args.repeats}, {args.rounds} rounds"
    print(f"\nCPU ms per mixedRecall search, pipeline only ({shape}); ratio: to the same search, first code")
    for name, values in results.items():
        code, _, search = name.partition(", ")
        base = results[f"{codes[0][0]}, {search}"]
        ratios = sorted(v / b for v, b in zip(values, base, strict=True))
        print(
            f"  {name:40s} median {statistics.median(values):.3f} ms   ratio to {codes[0][0]}: "
            f"{ratios[0]:.3f} / {statistics.median(ratios):.3f} / {ratios[-1]:.3f}"
        )


if __name__ == "__main__":
    main()
