"""Fixtures for the sandbox tests."""

from __future__ import annotations

import pytest

from fathom.sandbox import detect_isolation


@pytest.fixture(scope="session")
def isolated() -> None:
    info = detect_isolation()
    if not info.available:
        pytest.skip(f"OS isolation unavailable here: {info.reason}")
