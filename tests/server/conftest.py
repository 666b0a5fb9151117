"""A real Fathom server on a loopback port, in a background thread, for HTTP tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from live_support import LiveServer, backend_database_url, free_port, start_live_server

from fathom.config import Settings

__all__ = ["LiveServer", "free_port", "start_live_server"]


@pytest.fixture
def live_server(tmp_path: Path) -> Iterator[LiveServer]:
    settings = Settings(data_dir=tmp_path / "data", port=free_port(), max_body_bytes=64 * 1024, workers=1)
    yield from start_live_server(settings)


@pytest.fixture(scope="module")
def module_live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One server for a whole module whose tests do not change what the others see."""
    root = tmp_path_factory.mktemp("server")
    settings = Settings(data_dir=root / "data", port=free_port(), max_body_bytes=64 * 1024, workers=1)
    yield from start_live_server(settings)


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def module_live_server_each_backend(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[LiveServer]:
    """:func:`module_live_server` on SQLite, then on PostgreSQL: a module whose answers must be proven on
    both backends takes it as its ``module_live_server``."""
    database_url = backend_database_url(request, request.module.__name__.rsplit(".", 1)[-1])
    root = tmp_path_factory.mktemp(f"server_{request.param}")
    settings = Settings(
        data_dir=root / "data",
        port=free_port(),
        max_body_bytes=64 * 1024,
        workers=1,
        database_url=database_url,
    )
    yield from start_live_server(settings)
