"""Search latency of two checkouts, alternated round by round, over one kept 100k-chunk corpus.

    .venv/bin/fathom bench search-latency --backend postgres --keep DIR   # once: loads the corpus
    PYTHONPATH=src .venv/bin/python benchmarks/search_ab.py --keep DIR --before CHECKOUT \
        [--backend postgres|sqlite] [--mode mixedRecall] [--rounds 6] [--queries 100]

Each round runs every contender in a fresh process of its own code (``PYTHONPATH=<checkout>/src``) against
the same database (one embedded PostgreSQL server for the whole run, or the kept SQLite file), on the event
loop ``fathom serve`` runs (uvloop where installed), with serve's garbage-collector settings: a warm-up over
the queries, then every query once through ``DatasetSearchService.search`` (the query embedding excluded, as
in ``fathom bench search-latency``). Reported per contender: the wall p50 of its searches and the process's
CPU per search; then min / median / max of the paired ratios to the first contender.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
CHUNKS = 100_000


async def measure(url: str, mode: str, queries: int) -> dict[str, float]:
    """One contender's round, in this process: wall p50 (ms) and CPU per search (ms)."""
    from fathom.bench import search_latency as bench
    from fathom.gc_tuning import tune_garbage_collector
    from fathom.store.db import Database

    db = Database(url)
    try:
        stored = await bench._stored_corpus(db, CHUNKS)
        if stored is None:
            raise SystemExit(f"no kept corpus of {CHUNKS} chunks at {url}: run fathom bench search-latency")
        team_id, dataset_id = stored
        vectors = bench._query_set(bench.SyntheticCorpus(7), queries, 7)
        service = bench._search_service(db, vectors)
        params: dict[str, Any] = {"datasetIds": [dataset_id], "searchMode": mode, "limit": 5000}
        for text in vectors:  # warm-up: connections, prepared statements, SQLite's in-memory matrix
            params["queries"] = [text]
            await service.search(team_id, params, keep_cut=False)
        tune_garbage_collector()
        walls = []
        cpu_begun = time.process_time()
        for text in vectors:
            params["queries"] = [text]
            begun = time.perf_counter()
            await service.search(team_id, params, keep_cut=False)
            walls.append((time.perf_counter() - begun) * 1000)
        cpu = (time.process_time() - cpu_begun) * 1000 / len(walls)
        return {"p50": statistics.median(walls), "cpu": cpu}
    finally:
        await db.close()


def run_measure(url: str, mode: str, queries: int) -> dict[str, float]:
    try:
        import uvloop
    except ImportError:  # serve's loop is asyncio's then too
        return asyncio.run(measure(url, mode, queries))
    return uvloop.run(measure(url, mode, queries))  # as fathom.cli.bench's: the before checkout may lack it


def contender(src: Path, url: str, mode: str, queries: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    args = [sys.executable, str(HERE), "--measure", url, "--mode", mode, "--queries", str(queries)]
    done = subprocess.run(args, env=env, capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def summary(name: str, values: list[float], base: list[float]) -> str:
    ratios = sorted(v / b for v, b in zip(values, base, strict=True))
    return (
        f"{name:8s} median {statistics.median(values):6.2f} ms   ratio to before "
        f"{ratios[0]:.3f} / {statistics.median(ratios):.3f} / {ratios[-1]:.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="the folder given to fathom bench search-latency --keep")
    parser.add_argument("--before", type=Path, help="the other checkout")
    parser.add_argument("--backend", default="postgres", choices=("postgres", "sqlite"))
    parser.add_argument(
        "--mode", default="mixedRecall", choices=("embedding", "fullTextRecall", "mixedRecall")
    )
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(run_measure(args.measure, args.mode, args.queries)))
        return
    if args.keep is None or args.before is None:
        parser.error("--keep and --before are needed")
    server: Any = None
    if args.backend == "postgres":
        from fathom.bench.search_latency import PG_SETTINGS
        from fathom.store.pg_embedded import EmbeddedPostgres

        server = EmbeddedPostgres(root=args.keep / "postgres", settings=PG_SETTINGS)
        server.start()
        url = server.create_database("latency")
    else:
        url = f"sqlite:///{args.keep / 'sqlite' / 'fathom.db'}"
    codes = [("before", args.before / "src"), ("this", HERE.parents[1] / "src")]
    results: dict[str, dict[str, list[float]]] = {name: {"p50": [], "cpu": []} for name, _ in codes}
    try:
        for round_ in range(args.rounds):
            for name, src in codes if round_ % 2 == 0 else codes[::-1]:
                got = contender(src, url, args.mode, args.queries)
                for key in ("p50", "cpu"):
                    results[name][key].append(got[key])
            print(
                f"round {round_ + 1}: "
                + ", ".join(
                    f"{n} p50 {r['p50'][-1]:.2f} ms cpu {r['cpu'][-1]:.2f} ms" for n, r in results.items()
                ),
                flush=True,
            )
    finally:
        if server is not None:
            server.stop()
    load = os.getloadavg()[0]
    print(f"\n{args.backend} {args.mode}, {args.queries} queries x {args.rounds} rounds, load {load:.1f}")
    for key, label in (("p50", "wall p50"), ("cpu", "CPU per search")):
        print(label)
        for name, _ in codes:
            print("  " + summary(name, results[name][key], results["before"][key]))


if __name__ == "__main__":
    main()
