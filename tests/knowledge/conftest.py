"""Shared fixtures of the knowledge tests: one local embedder for the whole session."""

from __future__ import annotations

import pytest

from fathom.llm.local_embedding import LocalEmbedder


@pytest.fixture(scope="session")
def local_embedder() -> LocalEmbedder:
    return LocalEmbedder()
