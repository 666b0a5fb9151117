"""Small limits for the sandbox tests, so breaches are quick."""

from __future__ import annotations

from fathom.sandbox import SandboxLimits

FAST = SandboxLimits(
    wall_seconds=8.0, cpu_seconds=1, memory_mb=128, output_bytes=64_000, processes=16, max_requests=3
)
