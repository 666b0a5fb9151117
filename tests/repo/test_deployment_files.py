"""The Docker image and compose file of docs/deployment.md, checked as far as a machine without Docker
allows: the compose file parses; the image runs the very ``fathom serve`` / ``fathom worker`` that the
tests run (``python -m fathom``); every ``FATHOM_`` variable there and in the guide is a real setting; and
the compose file follows the guide's rules for several replicas."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from fathom.config import Settings

ROOT = Path(__file__).resolve().parents[2]
REPLICAS = ("fathom-1", "fathom-2")
FATHOM_SERVICES = (*REPLICAS, "worker")
SETTINGS = {f"FATHOM_{name.upper()}" for name in Settings.model_fields}


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded = yaml.safe_load((ROOT / "compose.yaml").read_text())
    assert isinstance(loaded, dict)
    return loaded


def _instruction(name: str) -> list[str]:
    """A Dockerfile instruction's exec-form (JSON) argument list."""
    lines = [line for line in (ROOT / "Dockerfile").read_text().splitlines() if line.startswith(f"{name} ")]
    assert len(lines) == 1, lines
    value = json.loads(lines[0][len(name) + 1 :])
    assert isinstance(value, list)
    return [str(part) for part in value]


def test_the_image_runs_the_fathom_command_the_tests_run() -> None:
    assert _instruction("ENTRYPOINT") == ["fathom"] and _instruction("CMD") == ["serve"]
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["fathom"] == "fathom.cli:main"  # the console script of the image's ENTRYPOINT
    main = (ROOT / "src" / "fathom" / "__main__.py").read_text()
    assert "from fathom.cli import main" in main  # what the tests' `python -m fathom` runs


def test_every_fathom_variable_in_the_image_compose_file_and_guide_is_a_setting(
    compose: dict[str, Any],
) -> None:
    named = set(re.findall(r"\bFATHOM_[A-Z0-9_]+\b", (ROOT / "Dockerfile").read_text()))
    for service in FATHOM_SERVICES:
        named |= {name for name in compose["services"][service]["environment"] if name.startswith("FATHOM_")}
    named |= set(re.findall(r"\bFATHOM_[A-Z0-9_]+\b", (ROOT / "docs" / "deployment.md").read_text()))
    assert named - SETTINGS == set()


def test_compose_runs_two_replicas_and_a_worker_on_postgres_and_redis(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert "pgvector" in services["postgres"]["image"] and services["redis"]["image"].startswith("redis:")
    envs = {name: services[name]["environment"] for name in FATHOM_SERVICES}
    for name in REPLICAS:
        assert services[name]["command"] == ["serve"]
        assert envs[name]["FATHOM_WORKERS"] == "0"  # the dedicated worker ingests
        assert "healthcheck" in services[name]
    assert services["worker"]["command"][0] == "worker"
    for variable in ("FATHOM_SECRET_KEY", "FATHOM_DATABASE_URL", "FATHOM_REDIS_URL", "FATHOM_DATA_DIR"):
        assert len({envs[name][variable] for name in FATHOM_SERVICES}) == 1, variable  # shared by all
    env = envs["worker"]
    assert env["FATHOM_SEED_DEMO"] == "false"
    assert urlsplit(env["FATHOM_DATABASE_URL"]).hostname == "postgres"
    assert urlsplit(env["FATHOM_REDIS_URL"]).hostname == "redis"
    for name in FATHOM_SERVICES:  # uploaded files: one volume, where every process looks for them
        assert services[name]["volumes"] == [f"fathom-data:{env['FATHOM_DATA_DIR']}"]
        assert set(services[name]["depends_on"]) == {"postgres", "redis"}


def test_the_compose_commands_are_ones_the_cli_accepts(compose: dict[str, Any], tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FATHOM_")}
    env["FATHOM_DATA_DIR"] = str(tmp_path)
    for name in FATHOM_SERVICES:
        command = [str(part) for part in compose["services"][name]["command"]]
        result = subprocess.run(
            [sys.executable, "-m", "fathom", *command, "--help"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, (command, result.stderr)
