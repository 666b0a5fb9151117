"""The ``fathom`` command: serve, worker, doctor, db upgrade, keys create, jobs."""

from __future__ import annotations

import asyncio
import errno
import gc
import json
import logging
import signal
import socket
import sys
from collections.abc import Awaitable, Callable
from enum import StrEnum
from pathlib import Path
from typing import Any, TypeVar

import typer
from rich.console import Console

from fathom import __version__
from fathom.config import ConfigError, Settings, load_settings

T = TypeVar("T")


class JobStatusChoice(StrEnum):
    queued = "queued"
    running = "running"
    done = "done"
    failed = "failed"


app = typer.Typer(help="Fathom: knowledge-base Q&A, workflows and agents.", no_args_is_help=True)
db_app = typer.Typer(help="Database schema.", no_args_is_help=True)
keys_app = typer.Typer(help="API keys.", no_args_is_help=True)
jobs_app = typer.Typer(help="Background jobs.", no_args_is_help=True)
bench_app = typer.Typer(help="Benchmarks through the real pipelines.", no_args_is_help=True)
app.add_typer(db_app, name="db")
app.add_typer(keys_app, name="keys")
app.add_typer(jobs_app, name="jobs")
app.add_typer(bench_app, name="bench")

out = Console()
err = Console(stderr=True)


def fail(message: str) -> typer.Exit:
    """Print one line to stderr and give the exit to raise."""
    err.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    return typer.Exit(code=1)


def configure_logging(settings: Settings) -> None:
    level = getattr(logging, settings.log_level.upper())
    handler = logging.StreamHandler(sys.stderr)
    if settings.log_format == "json":

        class JsonFormatter(logging.Formatter):
            def format(self, record: logging.LogRecord) -> str:
                entry = {"time": self.formatTime(record), "level": record.levelname, "logger": record.name}
                entry["message"] = record.getMessage()
                if record.exc_info:
                    entry["exception"] = self.formatException(record.exc_info)
                return json.dumps(entry, ensure_ascii=False)

        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)


def _settings() -> Settings:
    try:
        return load_settings()
    except ConfigError as exc:
        raise fail(str(exc)) from None


def _run(coro_factory: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine, turning configuration errors into one clean line and exit code 1."""

    async def main() -> T:
        return await coro_factory()

    try:
        return asyncio.run(main())
    except ConfigError as exc:
        raise fail(str(exc)) from None


def _platform(settings: Settings) -> Any:
    from fathom.platform import Platform

    try:
        return Platform.build(settings)
    except ConfigError as exc:
        raise fail(str(exc)) from None


def _load_models(settings: Settings) -> Any:
    from fathom.llm import load_model_registry

    try:
        return load_model_registry(settings)
    except ConfigError as exc:
        raise fail(str(exc)) from None


def _check_port(host: str, port: int) -> None:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        try:
            sock.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise fail(
                    f"FATHOM_PORT={port}: port {port} on {host} is already in use; "
                    "stop the other process or set FATHOM_PORT to a free port."
                ) from None
            raise fail(f"FATHOM_HOST={host}: cannot listen on {host}:{port} ({exc.strerror}).") from None


@app.command()
def version() -> None:
    """Print the version."""
    out.print(__version__)


@app.command()
def serve(
    host: str | None = typer.Option(None, help="Listen address (FATHOM_HOST)."),
    port: int | None = typer.Option(None, help="Listen port (FATHOM_PORT)."),
    workers: int | None = typer.Option(None, help="In-process job workers (FATHOM_WORKERS)."),
) -> None:
    """Start the HTTP server (migrates the database first; creates the admin key on first start)."""
    import uvicorn

    from fathom.server.app import create_app

    settings = _settings()
    updates = {k: v for k, v in {"host": host, "port": port, "workers": workers}.items() if v is not None}
    settings = settings.model_copy(update=updates)
    configure_logging(settings)
    _load_models(settings)
    platform = _platform(settings)
    platform.install_log_masking()
    _check_port(settings.host, settings.port)

    async def prepare() -> Any:
        try:
            return await platform.prepare(seed_demo=settings.seed_demo)
        finally:
            await platform.db.close()  # the server's event loop opens its own connections

    boot = _run(prepare)
    if boot.admin_key:
        out.print("[bold green]Created the admin API key. It is shown only once; keep it:[/]")
        out.print(f"  {boot.admin_key}", highlight=False)
    if boot.demo_app_id:
        out.print(
            f"Demo app (answers from the docs, no model needed): appId {boot.demo_app_id}",
            highlight=False,
            soft_wrap=True,
        )
    base = f"http://{settings.host}:{settings.port}"
    out.print(f"Fathom {__version__} on {base}  (console: {base}/, API docs: {base}/docs)", highlight=False)
    config = uvicorn.Config(
        create_app(platform),
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level,
        lifespan="on",
        log_config=None,
    )
    _freeze_startup_objects()
    uvicorn.Server(config).run()


def _freeze_startup_objects() -> None:
    """Move everything built at start (modules, models, tokenizers: ~150k objects) out of the garbage
    collector's full passes: they live as long as the process, and a full pass over them took ~80 ms on
    the 2-core machine, landing on one request in a few dozen as a latency spike."""
    gc.collect()
    gc.freeze()


@app.command()
def worker(
    once: bool = typer.Option(False, "--once", help="Run the jobs that are ready now, then exit."),
    concurrency: int = typer.Option(1, min=1, max=64, help="Jobs run at the same time by this process."),
) -> None:
    """Run background jobs (claimed from the database's jobs table) until stopped."""
    settings = _settings()
    configure_logging(settings)
    platform = _platform(settings)

    async def main() -> int:
        await platform.check_database()
        from fathom.store import migrate

        if not await migrate.is_current(platform.db):
            raise ConfigError("the database schema is not current; run `fathom db upgrade` first.")
        _freeze_startup_objects()
        try:
            if once:
                return sum(
                    await asyncio.gather(
                        *(platform.new_worker().run_until_idle() for _ in range(concurrency))
                    )
                )
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, stop.set)
            workers = [platform.new_worker() for _ in range(concurrency)]
            out.print(f"worker {workers[0].worker_id}: waiting for jobs (Ctrl+C to stop)", highlight=False)
            await asyncio.gather(*(w.run_forever(stop) for w in workers))
            return sum(w.jobs_run for w in workers)
        finally:
            await platform.close()

    ran = _run(main)
    out.print(f"ran {ran} job(s)")


@app.command()
def doctor() -> None:
    """Print the effective settings (secrets masked), then one line per check."""
    settings = _settings()
    out.print("[bold]Settings[/]")
    for name, value in settings.model_dump().items():
        shown = "********" if value is not None and ("key" in name or "secret" in name) else value
        out.print(f"  FATHOM_{name.upper()} = {shown}", highlight=False)
    if settings.database_url:
        from fathom.store.db import Database

        out.print(f"  (database: {Database(settings.database_url).describe()})", highlight=False)
    out.print("[bold]Checks[/]")
    failures = 0

    def line(ok: bool, what: str, detail: str) -> None:
        nonlocal failures
        failures += 0 if ok else 1
        mark = "[green]ok  [/]" if ok else "[red]FAIL[/]"
        out.print(f"  {mark} {what}: {detail}", highlight=False, soft_wrap=True)

    try:
        settings.ensure_data_dir()
        line(True, "data dir writable", str(settings.data_dir.resolve()))
    except ConfigError as exc:
        line(False, "data dir writable", str(exc))

    async def database_check() -> tuple[bool, str]:
        from fathom.platform import Platform
        from fathom.store import migrate
        from fathom.store.db import Database

        try:
            db = Database(settings.resolved_database_url)
        except ConfigError as exc:
            return False, str(exc)
        platform = Platform(settings=settings, db=db, secret_key="")
        try:
            await platform.check_database()
            current, head = await migrate.current_revision(db), migrate.head_revision()
            if current != head:
                return False, f"reachable, schema at {current} but {head} is current: run `fathom db upgrade`"
            return True, f"{db.describe()} reachable, schema current ({head})"
        except ConfigError as exc:
            return False, str(exc)
        finally:
            await db.close()

    ok, detail = asyncio.run(database_check())
    line(ok, "database reachable and migrated", detail)

    try:
        from fathom.llm import check_model_endpoint, load_model_registry

        registry = load_model_registry(settings)
        models = list(registry.models)
        line(True, "models file", f"{len(models)} model(s) configured")
        for model in models:
            answered, detail = asyncio.run(check_model_endpoint(model))
            line(answered, f"model {model.id}", detail)
    except ConfigError as exc:
        line(False, "models file", str(exc))
    if failures:
        raise typer.Exit(code=1)


@db_app.command("upgrade")
def db_upgrade() -> None:
    """Migrate the database to the newest schema (idempotent)."""
    settings = _settings()
    platform = _platform(settings)

    async def main() -> str | None:
        from fathom.store import migrate

        try:
            await platform.check_database()
            return await migrate.upgrade(platform.db)
        finally:
            await platform.db.close()

    revision = _run(main)
    out.print(f"database at revision {revision}")


@keys_app.command("create")
def keys_create(
    name: str = typer.Option("cli", help="A label for the key."),
    app_id: str | None = typer.Option(None, "--app", help="Limit the key to one app."),
) -> None:
    """Create an API key for the root team's owner and print it (shown once)."""
    settings = _settings()
    platform = _platform(settings)

    async def main() -> str:
        try:
            boot = await platform.prepare()
            if app_id is not None:
                await platform.apps.get_app(boot.team_id, app_id)
            _, plain = await platform.api_keys.create_key(
                boot.team_id, boot.member_id, name=name, app_id=app_id
            )
            return plain
        finally:
            await platform.db.close()

    from fathom.store.protocols import NotFound

    try:
        plain = _run(main)
    except NotFound as exc:
        raise fail(f"--app: {exc}") from None
    out.print(plain, highlight=False)


@jobs_app.command("list")
def jobs_list(status: JobStatusChoice | None = typer.Option(None, help="Only jobs in this state.")) -> None:
    """List background jobs with their state and last error."""
    settings = _settings()
    platform = _platform(settings)

    async def main() -> list[Any]:
        try:
            await platform.check_database()
            return await platform.jobs.list_jobs(status=status.value if status else None)
        finally:
            await platform.db.close()

    for job in _run(main):
        error = f"  error: {job.last_error}" if job.last_error else ""
        out.print(
            f"{job.id}  {job.kind:<24} {job.status:<8} attempts {job.attempts}/{job.max_attempts}{error}"
        )


@jobs_app.command("retry")
def jobs_retry(job_id: str) -> None:
    """Queue a failed job again."""
    settings = _settings()
    platform = _platform(settings)

    async def main() -> Any:
        try:
            await platform.check_database()
            return await platform.jobs.retry(job_id)
        finally:
            await platform.db.close()

    from fathom.store.protocols import NotFound

    try:
        job = _run(main)
    except (NotFound, ValueError) as exc:
        raise fail(str(exc)) from None
    out.print(f"job {job.id} queued again")


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
        ["rrf"],
        help="mixedRecall fusion: rrf, convex (default normalisation), convex-minmax, convex-tmm; repeatable",
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
            f"  {row.label:<24} nDCG@10 {row.ndcg_at_10:.4f}  Recall@100 {row.recall_at_100:.4f}  "
            f"p50 {row.latency_ms_p50:.1f} ms  p95 {row.latency_ms_p95:.1f} ms  ({row.queries} queries)"
        )
    if result.ingestion:
        out.print(f"  ingestion: {result.ingestion}")


@bench_app.command("search-latency")
def bench_search_latency(
    backend: list[str] = typer.Option(
        ["sqlite", "postgres"], help="sqlite or postgres (embedded); repeatable."
    ),
    chunks: int = typer.Option(100_000, help="Synthetic chunks in the knowledge base."),
    queries: int = typer.Option(200, help="Queries per search mode."),
    embed_queries: bool = typer.Option(True, help="Also time the local model's query embedding."),
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
        result = asyncio.run(
            run_search_latency(name, chunks=chunks, queries=queries, embed_queries=embed_queries)
        )
        results.append(result.as_dict())
        if as_json:
            continue
        out.print(f"{name}: {result.chunks} chunks loaded in {result.load_seconds:.0f}s")
        for row in result.modes:
            out.print(
                f"  {row.mode:<15} p50 {row.p50_ms:.1f} ms  p95 {row.p95_ms:.1f} ms  "
                f"(CPU p50 {row.cpu_p50_ms:.1f} ms, {row.mean_results:.0f} results, {row.queries} queries)"
            )
        if result.query_embedding:
            embedding = result.query_embedding
            out.print(
                f"  query embedding (local model): p50 {embedding['p50_ms']:.1f} ms  "
                f"p95 {embedding['p95_ms']:.1f} ms"
            )
    if as_json:
        out.print_json(json.dumps(results))


def main() -> None:
    app()
