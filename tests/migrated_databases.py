"""Migrated, empty databases for tests, copied from one template per test process instead of migrated one by
one: running the 22 migrations costs ~0.25–0.3 s of CPU a database on this 2-core machine, a copy ~5 ms
(SQLite: the template's file; PostgreSQL: ``CREATE DATABASE … TEMPLATE``). Each template is migrated by
:func:`fathom.store.migrate.upgrade` itself, once, the first time a test asks, so what a test gets is what
the product's migrations make. A test of the migrations (an upgrade from an empty or older schema, two
processes racing to migrate, a worker waiting for the schema) makes its own empty database instead."""

from __future__ import annotations

import atexit
import os
import shutil
import sqlite3
import tempfile
import threading
from pathlib import Path

from fathom.config import Settings
from fathom.store import migrate
from fathom.store.db import Database
from fathom.store.pg_embedded import EmbeddedPostgres
from run_apart import run_apart

_lock = threading.Lock()
_sqlite_template: Path | None = None
_postgres_templates: dict[int, str] = {}  # id(server) -> its template database's name


async def _migrate(url: str) -> None:
    db = Database(url)
    try:
        await migrate.upgrade(db)
    finally:
        await db.close()


def _template_file() -> Path:
    global _sqlite_template
    with _lock:
        if _sqlite_template is None:
            folder = Path(tempfile.mkdtemp(prefix=f"fathom-template-{os.getpid()}-"))
            atexit.register(shutil.rmtree, folder, ignore_errors=True)
            path = folder / "fathom.db"
            run_apart(_migrate(f"sqlite:///{path}"))  # a caller may be inside a running loop
            with sqlite3.connect(path) as conn:  # everything in the main file: a copy of it is whole
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            _sqlite_template = path
        return _sqlite_template


def migrated_sqlite_file(path: Path) -> str:
    """A migrated, empty SQLite database at ``path`` (which must not exist yet); answers its URL."""
    if path.exists():
        raise FileExistsError(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(_template_file(), path)
    return f"sqlite:///{path}"


def migrated_postgres_database(server: EmbeddedPostgres, name: str) -> str:
    """A migrated, empty database ``name`` on ``server``; answers its URL."""
    with _lock:
        template = _postgres_templates.get(id(server))
        if template is None:
            template = f"fathom_template_{os.getpid()}"
            run_apart(_migrate(server.create_database(template)))
            _postgres_templates[id(server)] = template
    return server.create_database(name, template=template)


def sqlite_migrated_ahead(settings: Settings) -> None:
    """A server about to start on a SQLite file that does not exist yet gets a migrated copy there: its
    start (:meth:`fathom.platform.Platform.prepare`) then finds the schema current and only bootstraps."""
    url = settings.resolved_database_url
    if url.startswith("sqlite:///") and "?" not in url:
        path = Path(url.removeprefix("sqlite:///"))
        if not path.exists():
            migrated_sqlite_file(path)


__all__ = ["migrated_postgres_database", "migrated_sqlite_file", "sqlite_migrated_ahead"]
