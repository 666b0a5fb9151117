"""``fathom worker`` started before the database is migrated (every role of a deployment started at
once) waits for the schema instead of failing, and runs once ``fathom serve`` or ``fathom db upgrade``
has migrated it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_a_worker_started_on_an_empty_database_waits_for_the_migration(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FATHOM_")}
    env.update({"FATHOM_DATA_DIR": str(tmp_path / "data"), "FATHOM_LOG_LEVEL": "warning"})
    fathom = [sys.executable, "-m", "fathom"]
    worker = subprocess.Popen(
        [*fathom, "worker", "--once"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert worker.stdout is not None
        line = worker.stdout.readline()  # the worker says it waits (and is still running)
        assert "waiting for the database schema" in line, line
        assert worker.poll() is None
        upgrade = subprocess.run(
            [*fathom, "db", "upgrade"], env=env, capture_output=True, text=True, timeout=60
        )
        assert upgrade.returncode == 0, upgrade.stderr
        out, err = worker.communicate(timeout=60)
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
    assert worker.returncode == 0, err
    assert "ran 0 job(s)" in out
