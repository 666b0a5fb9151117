"""The warm pool: pre-started one-shot processes, each used for exactly one run, then destroyed."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest
from sandbox_limits import FAST

from fathom.sandbox import SandboxRunner

pytestmark = pytest.mark.usefixtures("isolated")


async def test_warm_runs_skip_the_cold_start_and_never_share_state() -> None:
    async with SandboxRunner(FAST, warm=1) as runner:
        await runner.warm_up("python")
        first = await runner.run_python(
            "def main():\n    open('note.txt', 'w').write('left behind')\n    return 1"
        )
        assert first.success and first.warm and first.startup_ms == 0.0
        await runner.warm_up("python")  # the pool refills in the background; wait for it here
        second = await runner.run_python("def main():\n    return open('note.txt').read()")
        assert second.warm
        assert not second.success and "No such file or directory" in second.message


async def test_runs_with_other_limits_are_cold_and_javascript_can_be_warm() -> None:
    async with SandboxRunner(FAST, warm=1) as runner:
        await runner.warm_up("python", "javascript")
        cold = await runner.run_python("def main():\n    return 2", limits=replace(FAST, memory_mb=100))
        assert cold.success and not cold.warm and cold.startup_ms and cold.startup_ms > 0
        js = await runner.run_javascript("function main({a}) { return a * 2 }", {"a": 21})
        assert js.success and js.warm and js.code_return == 42


async def test_closing_the_runner_removes_idle_processes_and_dirs(tmp_path: Path) -> None:
    runner = SandboxRunner(FAST, warm=2, temp_root=str(tmp_path))
    await runner.warm_up("python")
    assert len(os.listdir(tmp_path)) == 2
    await runner.aclose()
    assert os.listdir(tmp_path) == []
    # a closed runner still runs code, just cold
    result = await runner.run_python("def main():\n    return 3")
    assert result.success and not result.warm
    assert os.listdir(tmp_path) == []
