"""``examples/fastgpt_dataset_script.py``, written against FastGPT's dataset docs, runs unchanged against a
real Fathom server (its own process, plain HTTP) and finishes."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from live_support import LiveServer, free_port, start_live_server

from fathom.config import Settings

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "fastgpt_dataset_script.py"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    root = tmp_path_factory.mktemp("example")
    yield from start_live_server(Settings(data_dir=root / "data", port=free_port(), workers=1))


def test_the_fastgpt_dataset_script_runs_unchanged(server: LiveServer) -> None:
    env = {**os.environ, "FASTGPT_BASE_URL": server.base_url, "FASTGPT_API_KEY": server.admin_key}
    run = subprocess.run(
        [sys.executable, str(SCRIPT)], env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[-1] == "done"
    assert "- search, only in collections tagged 'money'" in run.stdout
