"""Per-request storage profile of a chat: thread hops, pool check-outs, commits, statements.

    .venv/bin/python benchmarks/api_profile.py [--requests 200] [--postgres]

Serves the Fathom app in this process (``httpx.ASGITransport``, a fresh SQLite data dir, no job
workers; ``--postgres``: a database on an embedded PostgreSQL instead), creates the two apps of
``benchmarks/api.py`` (``start→answer`` without a model; a simple ``chat app`` against the scripted
model server, run in a thread of its own loop), warms up, then counts over ``--requests`` chat
completions (each a new chat):

- thread hops: callbacks handed to the event loop from another thread (``call_soon_threadsafe``):
  one per aiosqlite cursor call, one per ``asyncio.to_thread`` (a SQLite batch the event loop's
  thread could not take at once);
- check-outs: connections taken from any SQLAlchemy pool of the database (``checkout`` events);
- commits: transactions committed (``commit`` events, plus ``COMMIT`` statements sent as SQL; on a
  SQLite file's hot-path connections, which send it on the driver's connection, its trace callback);
- statements: SQL statements sent, ``BEGIN``/``COMMIT``/``ROLLBACK`` not counted, an ``executemany``
  batch counted once.

Run it with another checkout's code (``PYTHONPATH=<checkout>/src``) to compare before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import event

sys.path.insert(0, str(Path(__file__).resolve().parent))
from api import ANSWER, MODEL, chat_app, start_answer_app  # noqa: E402

from fathom.config import Settings  # noqa: E402
from fathom.platform import Platform  # noqa: E402
from fathom.server.app import create_app  # noqa: E402
from fathom.testing import ScriptedOpenAIServer, text_turn  # noqa: E402


def watch(platform: Platform, counts: Counter[str]) -> None:
    """Count check-outs, commits and statements on every engine of the platform's database."""
    engines = [platform.db.engine.sync_engine]
    # the hot path's engines on a SQLite file (a worker thread's, the event loop's), where they exist
    batches = platform.db.sqlite_batches
    if batches is not None:
        engines += [batches.worker_engine, batches.loop_engine]

    def driver_commits(sql: str) -> None:  # BEGIN/COMMIT sent on the driver's connection directly
        if sql.lstrip().upper().startswith("COMMIT"):
            counts["commits"] += 1

    def traced(dbapi_connection: Any, *args: Any) -> None:
        if hasattr(dbapi_connection, "set_trace_callback"):  # sqlite3
            dbapi_connection.set_trace_callback(driver_commits)

    for engine in engines[1:]:
        event.listen(engine.pool, "checkout", traced)
    for engine in engines:

        def statement(conn: Any, cursor: Any, sql: str, params: Any, context: Any, many: bool) -> None:
            word = sql.lstrip().split(None, 1)[0].upper() if sql.strip() else ""
            if word == "COMMIT":
                if not hasattr(cursor, "connection") or not hasattr(cursor.connection, "set_trace_callback"):
                    counts["commits"] += 1  # on SQLite the trace callback counts it
            elif word not in ("BEGIN", "ROLLBACK", "PRAGMA"):
                counts["statements"] += 1

        event.listen(engine, "before_cursor_execute", statement)
        event.listen(engine, "commit", lambda conn: counts.update(["commits"]))
        event.listen(engine.pool, "checkout", lambda *args: counts.update(["check-outs"]))


def count_hops(loop: asyncio.AbstractEventLoop, counts: Counter[str]) -> None:
    original = loop.call_soon_threadsafe

    def counted(callback: Any, *args: Any, **kwargs: Any) -> Any:
        counts["thread hops"] += 1
        return original(callback, *args, **kwargs)

    loop.call_soon_threadsafe = counted  # type: ignore[method-assign]


async def profile(requests: int, model_url: str, database_url: str | None) -> dict[str, dict[str, float]]:
    root = Path(tempfile.mkdtemp(prefix="fathom-profile-"))
    settings = Settings(
        data_dir=root / "data",
        database_url=database_url,
        workers=0,
        seed_demo=False,
        openai_base_url=model_url,
        chat_model=MODEL,
    )
    platform = Platform.build(settings)
    boot = await platform.prepare()
    app = create_app(platform, run_workers=False)
    counts: Counter[str] = Counter()
    watch(platform, counts)
    count_hops(asyncio.get_running_loop(), counts)
    results: dict[str, dict[str, float]] = {}
    headers = {"Authorization": f"Bearer {boot.admin_key}"}
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://fathom", headers=headers) as client:
        for name, body in (("start→answer", start_answer_app()), ("chat app", chat_app())):
            app_id = (await client.post("/api/core/app/create", json=body)).json()["data"]
            chat = {"appId": app_id, "messages": [{"role": "user", "content": "hello"}]}
            for _ in range(10):
                (await client.post("/api/v1/chat/completions", json=chat)).raise_for_status()
            await asyncio.sleep(1.5)  # let written-behind counters of the warm-up go out
            counts.clear()
            for _ in range(requests):
                (await client.post("/api/v1/chat/completions", json=chat)).raise_for_status()
            flushed = getattr(platform.api_keys, "flush", None)
            if flushed is not None:
                await flushed()  # the counters written behind belong to these requests
            results[name] = {
                k: counts[k] / requests for k in ("thread hops", "check-outs", "commits", "statements")
            }
    await platform.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--postgres", action="store_true", help="on an embedded PostgreSQL")
    args = parser.parse_args()
    postgres = None
    database_url = None
    if args.postgres:
        from fathom.store.pg_embedded import EmbeddedPostgres

        postgres = EmbeddedPostgres()
        postgres.start()
        database_url = postgres.create_database("profile")
    try:
        with ScriptedOpenAIServer(lambda _: text_turn(ANSWER), model=MODEL) as model:
            results = asyncio.run(profile(args.requests, model.base_url, database_url))
    finally:
        if postgres is not None:
            postgres.stop()
    print("| per request | " + " | ".join(results) + " |")
    print("|---|" + "---:|" * len(results))
    for key in ("thread hops", "check-outs", "commits", "statements"):
        print(f"| {key} | " + " | ".join(f"{r[key]:.2f}" for r in results.values()) + " |")


if __name__ == "__main__":
    main()
