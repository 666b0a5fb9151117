"""Shared fixtures for the sandbox tests: small limits so breaches are quick."""

from __future__ import annotations

import pytest

from fathom.sandbox import SandboxLimits, detect_isolation

FAST = SandboxLimits(
    wall_seconds=8.0, cpu_seconds=1, memory_mb=128, output_bytes=64_000, processes=16, max_requests=3
)


@pytest.fixture(scope="session")
def isolated() -> None:
    info = detect_isolation()
    if not info.available:
        pytest.skip(f"OS isolation unavailable here: {info.reason}")
