"""The ``fathom`` command: serve, worker, doctor, db upgrade, keys create, jobs (and ``bench``, in
``fathom.cli.bench``; ``users``, in ``fathom.cli.users``)."""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import signal
import socket
import sys
from collections.abc import Awaitable, Callable
from enum import StrEnum
from typing import Any, TypeVar

import typer

from fathom import __version__
from fathom.cli.bench import bench_app
from fathom.cli.output import err, fail, out
from fathom.cli.users import users_app
from fathom.config import ConfigError, Settings, load_settings
from fathom.gc_tuning import tune_garbage_collector

__all__ = ["app", "err", "fail", "main", "out"]

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
app.add_typer(db_app, name="db")
app.add_typer(keys_app, name="keys")
app.add_typer(jobs_app, name="jobs")
app.add_typer(bench_app, name="bench")  # fathom.cli.bench
app.add_typer(users_app, name="users")  # fathom.cli.users


def _configure_logging(settings: Settings) -> None:
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
    for name in RAW_DEBUG_LOGGERS:  # FATHOM_LOG_LEVEL=debug is Fathom's detail, never their raw data
        logging.getLogger(name).setLevel(max(level, logging.INFO))


#: libraries whose DEBUG lines print raw data: HTTP headers (cookies, tokens) and SQL call arguments
RAW_DEBUG_LOGGERS = ("httpcore", "hpack", "aiosqlite", "multipart", "python_multipart")


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
    """Refuse, in one line, exactly what uvicorn would fail to bind: it sets ``SO_REUSEADDR``, so the
    TIME-WAIT sockets a killed server leaves behind do not block it (a supervisor restarts at once), while
    a process still listening on the port does."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        if sys.platform != "win32":  # as uvicorn (and asyncio's create_server) do
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
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
    settings = _settings()
    updates = {k: v for k, v in {"host": host, "port": port, "workers": workers}.items() if v is not None}
    settings = settings.model_copy(update=updates)
    _configure_logging(settings)
    # a bad setting or a busy port is refused before the ~3 s of CPU that importing the server costs
    _check_port(settings.host, settings.port)
    from fathom.cli.start_banner import AnnouncingServer, print_ready
    from fathom.server.app import create_app, server_config

    _load_models(settings)
    platform = _platform(settings)
    platform.install_log_masking()

    async def prepare() -> Any:
        try:
            return await platform.prepare(seed_demo=settings.seed_demo)
        finally:
            await platform.db.close()  # the server's event loop opens its own connections

    boot = _run(prepare)
    config = server_config(
        create_app(platform), settings.host, settings.port, log_level=settings.log_level, lifespan="on"
    )
    tune_garbage_collector()
    # the address and the first start's credentials, boxed, once every start-up log line is out
    AnnouncingServer(config, lambda: print_ready(settings.host, settings.port, boot)).run()


SCHEMA_WAIT_S = 120.0


async def _wait_for_schema(db: Any) -> None:
    """A worker started with (or before) the replicas that migrate the database waits for them, up to
    ``SCHEMA_WAIT_S``, instead of failing: a compose file or supervisor can start every role at once."""
    from fathom.store import migrate

    deadline = asyncio.get_running_loop().time() + SCHEMA_WAIT_S
    if await migrate.is_current(db):
        return
    out.print("waiting for the database schema (`fathom serve` or `fathom db upgrade` migrates it)")
    while not await migrate.is_current(db):
        if asyncio.get_running_loop().time() > deadline:
            raise ConfigError(
                f"the database schema is not current after {SCHEMA_WAIT_S:.0f} s; "
                "run `fathom db upgrade` (or start `fathom serve`) first."
            )
        await asyncio.sleep(1.0)


@app.command()
def worker(
    once: bool = typer.Option(
        False,
        "--once",
        help="Run the jobs that are ready now, then exit (a job leased to another worker, even a dead one, "
        "is ready once its lease runs out).",
    ),
    concurrency: int = typer.Option(1, min=1, max=64, help="Jobs run at the same time by this process."),
) -> None:
    """Run background jobs (claimed from the database's jobs table) until stopped."""
    settings = _settings()
    _configure_logging(settings)
    platform = _platform(settings)

    async def main() -> int:
        await platform.check_database()
        await _wait_for_schema(platform.db)
        tune_garbage_collector()
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
            listener = platform.job_notice_listener()  # PostgreSQL: woken by other processes' jobs
            await asyncio.gather(
                *(w.run_forever(stop) for w in workers),
                platform.sync_scheduler().run_forever(stop),
                *([listener.run(stop)] if listener is not None else []),
            )
            return sum(w.jobs_run for w in workers)
        finally:
            await platform.close()

    ran = _run(main)
    out.print(f"ran {ran} job(s)")


def _without_password(url: str) -> str:
    """``scheme://user:********@host/…`` for a URL that carries a password (a database's, Redis's)."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
        user = parts.username or ""
        host = parts.netloc.rpartition("@")[2]
        return urlunsplit(parts._replace(netloc=f"{user}:********@{host}"))
    except ValueError:
        return "********"


@app.command()
def doctor() -> None:
    """Print the effective settings (secrets masked), then one line per check."""
    settings = _settings()
    out.print("[bold]Settings[/]")
    for name, value in settings.model_dump().items():
        shown = "********" if value is not None and ("key" in name or "secret" in name) else value
        if name.endswith("_url") and isinstance(shown, str):
            shown = _without_password(shown)
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
            if current != head:  # not a failure: the first `fathom serve` (or a newer one) migrates it
                state = "empty" if current is None else f"schema at {current}, {head} is current"
                return True, (
                    f"{db.describe()} reachable, {state}: `fathom serve` migrates it when it starts "
                    "(or run `fathom db upgrade`); `fathom worker`s wait for that"
                )
            return True, f"{db.describe()} reachable, schema current ({head})"
        except ConfigError as exc:
            return False, str(exc)
        finally:
            await db.close()

    ok, detail = asyncio.run(database_check())
    line(ok, "database reachable" if "migrates it" in detail else "database reachable and migrated", detail)

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
    from fathom.agent import provider_gaps, registered_providers

    for provider in registered_providers():
        gaps = provider_gaps(provider)
        line(
            True, f"agent provider {provider}", "complete" if not gaps else "gaps: " + ", ".join(sorted(gaps))
        )
    if settings.redis_url:
        from fathom.chat.fanout import check_redis

        reachable, detail = asyncio.run(check_redis(settings.redis_url))
        line(reachable, "redis", detail)
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


def main() -> None:
    app()
