"""The ``fathom`` command as a user runs it: real subprocesses, real files, real ports."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

FATHOM = [sys.executable, "-m", "fathom"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FATHOM_")}
    # no demo knowledge base: its ingestion would compete with what these tests measure
    env.update(
        {
            "FATHOM_DATA_DIR": str(tmp_path / "data"),
            "FATHOM_LOG_LEVEL": "warning",
            "FATHOM_SEED_DEMO": "false",
        }
    )
    env.update(extra)
    return env


def run_cli(*args: str, env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*FATHOM, *args], env=env, capture_output=True, text=True, timeout=timeout)


def cli_in_process(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The same ``fathom`` typer app run in this process, with ``env``'s ``FATHOM_*`` settings and no others.

    A fresh interpreter spends ~3 s of CPU importing fathom before a command starts (issue #33). What a
    user sees of a whole process (``serve``, the one-clean-line errors, a worker that configures logging)
    runs through :func:`run_cli`; commands whose output these tests read (``db upgrade``, ``doctor``,
    ``keys create``, ``jobs list``) run here. An exception the command does not turn into a clean exit is
    raised, where a subprocess would print its traceback."""
    from typer.testing import CliRunner

    from fathom.cli import app

    settings: dict[str, str | None] = {k: None for k in os.environ if k.startswith("FATHOM_")}
    settings.update({k: v for k, v in env.items() if k.startswith("FATHOM_")})
    result = CliRunner().invoke(app, list(args), env=settings)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return subprocess.CompletedProcess(["fathom", *args], result.exit_code, result.stdout, result.stderr)


def assert_one_clean_error(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode != 0
    assert "Traceback" not in result.stderr + result.stdout
    lines = [line for line in result.stderr.strip().splitlines() if line.strip()]
    text = " ".join(line.strip() for line in lines)  # rich may wrap a long line on narrow terminals
    assert text.startswith("error:"), result.stderr
    for fragment in fragments:
        assert fragment in text, text


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[str], dict[str, str]]]:
    port = _free_port()
    env = _env(tmp_path, FATHOM_PORT=str(port))
    proc = subprocess.Popen(
        [*FATHOM, "serve"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{base}/api/health", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            out, err = proc.communicate(timeout=5)
            pytest.fail(f"fathom serve did not become healthy: {out}\n{err}")
        time.sleep(0.2)
    yield base, proc, env
    proc.terminate()
    proc.wait(timeout=15)


def _stop(proc: subprocess.Popen[str]) -> str:
    proc.terminate()
    out, _ = proc.communicate(timeout=15)
    return out


def test_serve_prints_the_admin_key_once_and_it_authenticates(
    served: tuple[str, subprocess.Popen[str], dict[str, str]], tmp_path: Path
) -> None:
    base, proc, env = served
    out = _stop(proc)
    key = next(word for word in out.split() if word.startswith("fathom-"))
    # second start on the same data dir: same database, no new key printed
    port = _free_port()
    env2 = {**env, "FATHOM_PORT": str(port)}
    again = subprocess.Popen(
        [*FATHOM, "serve"], env=env2, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                response = httpx.get(
                    f"http://127.0.0.1:{port}/api/v1/whoami",
                    headers={"Authorization": f"Bearer {key}"},
                    timeout=1,
                )
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline and again.poll() is None
                time.sleep(0.2)
        assert response.status_code == 200 and response.json()["data"]["role"] == "owner"
    finally:
        out2 = _stop(again)
    assert "fathom-" not in out2
    assert (tmp_path / "data" / "fathom.db").exists() and (tmp_path / "data" / "secret_key").exists()


def test_port_in_use_is_one_clear_line(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = run_cli("serve", env=_env(tmp_path, FATHOM_PORT=str(port)))
    assert_one_clean_error(result, f"FATHOM_PORT={port}", "already in use")


def test_unwritable_data_dir_is_one_clear_line(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    result = run_cli("serve", env=_env(tmp_path, FATHOM_DATA_DIR=str(blocker / "data")))
    assert_one_clean_error(result, "FATHOM_DATA_DIR", "not writable")


def test_unreachable_database_is_one_clear_line(tmp_path: Path) -> None:
    url = f"postgresql://nobody@127.0.0.1:{_free_port()}/fathom"
    result = run_cli("db", "upgrade", env=_env(tmp_path, FATHOM_DATABASE_URL=url))
    assert_one_clean_error(result, "FATHOM_DATABASE_URL", "cannot connect")


def test_unsupported_database_url_is_one_clear_line(tmp_path: Path) -> None:
    result = run_cli("db", "upgrade", env=_env(tmp_path, FATHOM_DATABASE_URL="mysql://x@localhost/db"))
    assert_one_clean_error(result, "FATHOM_DATABASE_URL", "sqlite:///", "postgresql://")


def test_malformed_models_file_is_one_clear_line(tmp_path: Path) -> None:
    models = tmp_path / "models.yaml"
    models.write_text("models:\n  - id: gpt\n    type: llm\n    max_context: lots\n")
    result = run_cli(
        "serve", env=_env(tmp_path, FATHOM_MODELS_FILE=str(models), FATHOM_PORT=str(_free_port()))
    )
    assert_one_clean_error(result, "models.yaml", "gpt", "max_context")


def test_invalid_setting_is_one_clear_line(tmp_path: Path) -> None:
    result = run_cli("serve", env=_env(tmp_path, FATHOM_PORT="seventy"))
    assert_one_clean_error(result, "FATHOM_PORT")


def test_db_upgrade_is_idempotent(tmp_path: Path) -> None:
    env = _env(tmp_path)
    first, second = cli_in_process("db", "upgrade", env=env), cli_in_process("db", "upgrade", env=env)
    assert first.returncode == 0 and second.returncode == 0
    assert first.stdout.split()[-1] == second.stdout.split()[-1]


def test_keys_create_prints_a_working_key(served: tuple[str, subprocess.Popen[str], dict[str, str]]) -> None:
    base, _, env = served
    result = cli_in_process("keys", "create", "--name", "ci", env=env)
    assert result.returncode == 0, result.stderr
    key = result.stdout.strip()
    response = httpx.get(f"{base}/api/v1/whoami", headers={"Authorization": f"Bearer {key}"})
    assert response.status_code == 200
    unknown_app = cli_in_process("keys", "create", "--app", "0" * 24, env=env)
    assert_one_clean_error(unknown_app, "--app", "not found")


def test_doctor_prints_masked_settings_and_every_check(tmp_path: Path) -> None:
    from fathom.testing import ScriptedOpenAIServer

    with ScriptedOpenAIServer() as model_server:
        env = _env(
            tmp_path,
            FATHOM_SECRET_KEY="s" * 32,
            FATHOM_OPENAI_API_KEY="sk-very-secret-value",
            FATHOM_OPENAI_BASE_URL=model_server.base_url,
            FATHOM_CHAT_MODEL="scripted-chat",
        )
        assert cli_in_process("db", "upgrade", env=env).returncode == 0
        result = cli_in_process("doctor", env=env)
        asked = [request.path for request in model_server.requests]
    assert "sk-very-secret-value" not in result.stdout and "s" * 32 not in result.stdout
    assert "FATHOM_SECRET_KEY = ********" in result.stdout
    for check in (
        "data dir writable",
        "database reachable and migrated",
        "models file",
        "model scripted-chat",
        "agent provider fastAgent: complete",
    ):
        assert check in result.stdout
    assert "agent provider pydanticAI: gaps: " in result.stdout  # the provider contract's declared gaps
    assert result.returncode == 0, result.stdout
    assert any(path.endswith("/models") for path in asked)


def test_doctor_reports_a_model_endpoint_that_does_not_answer(tmp_path: Path) -> None:
    env = _env(
        tmp_path,
        FATHOM_OPENAI_BASE_URL=f"http://127.0.0.1:{_free_port()}/v1",
        FATHOM_OPENAI_API_KEY="sk-x",
        FATHOM_CHAT_MODEL="down-model",
    )
    assert cli_in_process("db", "upgrade", env=env).returncode == 0
    result = cli_in_process("doctor", env=env)
    assert result.returncode == 1
    assert "FAIL model down-model" in " ".join(result.stdout.split())


def test_doctor_on_an_empty_database_says_serve_migrates_it(tmp_path: Path) -> None:
    result = cli_in_process("doctor", env=_env(tmp_path))
    words = " ".join(result.stdout.split())
    assert "ok database reachable: " in words and "empty: `fathom serve` migrates it when it starts" in words
    assert "FAIL database" not in words and result.returncode == 0, result.stdout


def test_doctor_reports_a_redis_that_does_not_answer_without_its_address(tmp_path: Path) -> None:
    port = _free_port()
    env = _env(tmp_path, FATHOM_REDIS_URL=f"redis://:hunter2secret@127.0.0.1:{port}/0")
    result = cli_in_process("doctor", env=env)
    words = " ".join(result.stdout.split())
    assert "FAIL redis: unreachable" in words and result.returncode == 1
    assert "hunter2secret" not in result.stdout and f"unreachable: {port}" not in words


def test_worker_once_claims_and_runs_jobs_from_the_table(tmp_path: Path) -> None:
    import asyncio

    from fathom.config import Settings
    from fathom.platform import Platform

    env = _env(tmp_path)
    assert cli_in_process("db", "upgrade", env=env).returncode == 0
    platform = Platform.build(Settings(data_dir=tmp_path / "data"))

    async def enqueue() -> list[str]:
        try:
            a = await platform.jobs.enqueue("db.analyze", {})
            b = await platform.jobs.enqueue("db.analyze", {})
            return [a.id, b.id]
        finally:
            await platform.db.close()

    ids = asyncio.run(enqueue())
    result = run_cli("worker", "--once", env=env)
    assert result.returncode == 0, result.stderr
    assert "ran 2 job(s)" in result.stdout

    async def states() -> list[tuple[str, dict[str, object] | None]]:
        try:
            return [((job := await platform.jobs.get(i)).status, job.result) for i in ids]
        finally:
            await platform.db.close()

    assert asyncio.run(states()) == [("done", {"analyzed": True, "dialect": "sqlite"})] * 2
    listing = cli_in_process("jobs", "list", env=env)
    assert listing.stdout.count("db.analyze") == 2 and "done" in listing.stdout
