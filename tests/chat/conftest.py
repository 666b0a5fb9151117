"""Fixtures: a live Fathom server with a scripted OpenAI-compatible model server (and one without)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from chat_support import MODEL, ChatServer, free_port, start_chat_server

from fathom.config import Settings
from fathom.testing import ScriptedOpenAIServer


@pytest.fixture(scope="session")
def scripted() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as server:
        yield server


@pytest.fixture(scope="session")
def chat_server(
    tmp_path_factory: pytest.TempPathFactory, scripted: ScriptedOpenAIServer
) -> Iterator[ChatServer]:
    root = tmp_path_factory.mktemp("chat")
    settings = Settings(
        data_dir=root / "data",
        port=free_port(),
        workers=0,
        openai_base_url=scripted.base_url,
        chat_model=MODEL,
        egress_allow_cidrs=["127.0.0.1/32"],
    )
    yield from start_chat_server(settings, scripted)


@pytest.fixture(scope="session")
def bare_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChatServer]:
    """A server with no model configured."""
    root = tmp_path_factory.mktemp("bare")
    settings = Settings(data_dir=root / "data", port=free_port(), workers=0)
    yield from start_chat_server(settings, None)
