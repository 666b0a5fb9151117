"""Fixtures for the agent tests: a scripted model server and an event/usage recorder."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from agent_helpers import Recorder

from fathom.testing import ScriptedOpenAIServer


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as scripted:
        yield scripted


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()
