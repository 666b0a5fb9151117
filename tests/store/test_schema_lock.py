"""Processes that prepare one empty database at the same moment take turns (``migrate.schema_lock``):
the schema is migrated once, and exactly one of them creates the root team and prints the admin key."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from fathom.config import Settings
from fathom.platform import Platform
from fathom.store import migrate
from fathom.store.pg_embedded import EmbeddedPostgres

SECRET = "schema-lock-test-secret-key-0123456789"


def _url(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'fathom.db'}"
    server: EmbeddedPostgres = request.getfixturevalue("postgres_server")
    return server.create_database(f"lock_{os.getpid()}_{tmp_path.name[-20:].replace('-', '_')}")


async def test_platforms_preparing_an_empty_database_together_make_one_admin_key(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = _url(backend, tmp_path, request)
    platforms = [
        Platform.build(Settings(database_url=url, data_dir=tmp_path / f"p{i}", secret_key=SECRET))
        for i in range(3)
    ]
    try:
        boots = await asyncio.wait_for(asyncio.gather(*(p.prepare() for p in platforms)), timeout=120)
        assert sum(boot.admin_key is not None for boot in boots) == 1
        assert len({boot.team_id for boot in boots}) == 1  # one root team, found by the others
        assert await platforms[0].teams.count_teams() == 1
        assert await migrate.is_current(platforms[0].db)
    finally:
        for platform in platforms:
            await platform.db.close()


async def test_databases_opening_one_new_sqlite_file_together_all_connect(tmp_path: Path) -> None:
    """Found by CI: three platforms preparing one new SQLite file, one's database check failed with
    "database is locked" at once (the WAL switch refuses a connection opened at that instant without
    waiting for the busy timeout; reproduced in 19 of 150 rounds of three plain connects). ``ping``
    retries that refusal for a few seconds: 40 rounds of three at once on a new file, all connect."""
    from fathom.store.db import Database

    for round_number in range(40):
        url = f"sqlite+aiosqlite:///{tmp_path / f'new-{round_number}.db'}"
        databases = [Database(url) for _ in range(3)]
        try:
            results = await asyncio.gather(*(db.ping() for db in databases), return_exceptions=True)
        finally:
            for db in databases:
                await db.close()
        assert [r for r in results if isinstance(r, BaseException)] == [], round_number
