"""``fathom users`` and the first start's credentials (issue 31 item 7), as an operator runs them: real
``fathom`` subprocesses, and sign-ins over HTTP against a real server on the same database, on SQLite and
on PostgreSQL."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from test_cli_commands import _env, _free_port, cli_in_process, run_cli

from fathom import __version__

LOGIN = "/api/support/user/account/loginByPassword"
SERVER_TESTS = Path(__file__).parents[1] / "server"


def printed_password(stdout: str) -> str:
    """The password a ``fathom users`` command printed (the line after 'shown only this once')."""
    lines = stdout.splitlines()
    marker = next(i for i, line in enumerate(lines) if "shown only this once" in line)
    return lines[marker + 1].strip()


def users(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``fathom users …`` through the typer app in this process (a fresh interpreter costs ~3 s of CPU to
    import fathom, issue #33); the first command of a database and the one-clean-line errors run as real
    subprocesses through :func:`run_cli`."""
    return cli_in_process("users", *args, env=env)


def sign_in_status(base: str, username: str, password: str) -> int:
    return httpx.post(base + LOGIN, json={"username": username, "password": password}, timeout=30).status_code


@pytest.fixture(params=["sqlite", "postgres"])
def operator_env(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, str]:
    """The environment of ``fathom`` commands on a fresh database of each backend."""
    env = _env(tmp_path)
    if request.param == "postgres":
        server = request.getfixturevalue("postgres_server")
        env["FATHOM_DATABASE_URL"] = server.create_database(f"users_cli_{os.getpid()}_{id(env)}")
    return env


def _serve_in_thread(env: dict[str, str]) -> Iterator[str]:
    """A server (in this process) on the database the commands used; yields its base URL."""
    sys.path.insert(0, str(SERVER_TESTS))
    from live_support import start_live_server

    from fathom.config import Settings

    settings = Settings(
        data_dir=Path(env["FATHOM_DATA_DIR"]),
        database_url=env.get("FATHOM_DATABASE_URL"),
        port=_free_port(),
        workers=0,
    )
    yield from (server.base_url for server in start_live_server(settings, replica=True))


def test_users_create_reset_disable_and_list_on_both_backends(operator_env: dict[str, str]) -> None:
    env = operator_env
    created = run_cli("users", "create", "alice", "--role", "admin", env=env)
    assert created.returncode == 0, created.stderr
    # the command was the first to touch this database: root's one-time password is printed too
    assert "First start: your credentials" in created.stdout
    assert "Created the user alice (admin)." in created.stdout
    alice_first = printed_password(created.stdout)

    reset = users(env, "reset-password", "alice")
    assert reset.returncode == 0, reset.stderr
    alice_second = printed_password(reset.stdout)
    assert alice_second != alice_first
    assert "First start" not in reset.stdout  # the credentials of the first start are shown once only

    root_reset = users(env, "reset-password", "root")
    root_password = printed_password(root_reset.stdout)
    assert users(env, "disable", "alice").returncode == 0

    listing = users(env, "list").stdout.splitlines()
    assert listing[0].split() == ["USERNAME", "ROLE", "STATE", "CREATED"]
    rows = {line.split()[0]: line.split()[1:3] for line in listing[1:]}
    assert rows == {"root": ["owner", "active"], "alice": ["admin", "disabled"]}

    base_urls = _serve_in_thread(env)
    base = next(base_urls)
    try:
        assert sign_in_status(base, "root", root_password) == 200  # a lost root password, recovered
        assert sign_in_status(base, "alice", alice_second) == 401  # disabled
        assert sign_in_status(base, "alice", alice_first) == 401
        enabled = users(env, "reset-password", "alice")
        assert sign_in_status(base, "alice", printed_password(enabled.stdout)) == 200
    finally:
        base_urls.close()


def test_a_reset_ends_the_users_sessions_and_lifts_the_lock_out(tmp_path: Path) -> None:
    env = _env(tmp_path)
    password = printed_password(users(env, "create", "bob").stdout)
    base_urls = _serve_in_thread(env)
    base = next(base_urls)
    try:
        client = httpx.Client(base_url=base, timeout=30)
        signed_in = client.post(LOGIN, json={"username": "bob", "password": password}).json()["data"]
        csrf = {"X-CSRF-Token": signed_in["csrfToken"]}
        assert client.get("/api/v1/whoami", headers=csrf).status_code == 200
        statuses = {sign_in_status(base, "bob", "wrong password") for _ in range(6)}
        assert 429 in statuses  # locked out
        new = printed_password(users(env, "reset-password", "bob").stdout)
        assert client.get("/api/v1/whoami", headers=csrf).status_code == 401  # the session ended
        assert sign_in_status(base, "bob", new) == 200  # and the lock-out is lifted
    finally:
        base_urls.close()


def test_unknown_users_and_bad_names_are_one_clear_line(tmp_path: Path) -> None:
    env = _env(tmp_path)
    missing = run_cli("users", "reset-password", "nobody", env=env)
    assert missing.returncode == 1 and "Traceback" not in missing.stderr
    assert "username: no user is called 'nobody'" in missing.stderr
    bad = run_cli("users", "create", "x", env=env)
    assert bad.returncode == 1 and "username: 3 to 64 characters" in bad.stderr
    taken = run_cli("users", "create", "root", env=env)
    assert taken.returncode == 1 and "'root' is taken" in taken.stderr


def test_serve_prints_the_credentials_boxed_after_every_log_line(tmp_path: Path) -> None:
    port = _free_port()
    env = _env(tmp_path, FATHOM_PORT=str(port), FATHOM_LOG_LEVEL="info")
    proc = subprocess.Popen(
        [sys.executable, "-m", "fathom", "serve"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # one stream: the order the user sees
        text=True,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout or []), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 60
        while not any(line.startswith("Fathom ") for line in lines):
            assert proc.poll() is None and time.monotonic() < deadline, "".join(lines)
            time.sleep(0.1)
        time.sleep(1)  # anything the start-up still had to log
        running = len(lines)
    finally:
        proc.terminate()
        proc.wait(timeout=15)
        reader.join(timeout=5)
    output = [line.rstrip("\n") for line in lines]
    top = next(i for i, line in enumerate(output) if "First start: your credentials" in line)
    bottom = next(i for i in range(top, len(output)) if output[i].startswith("╰"))
    box = "\n".join(output[top : bottom + 1])
    assert any("Running upgrade" in line for line in output[:top])  # the migrations came first
    assert any("Uvicorn running on" in line for line in output[:top])  # and uvicorn's own lines
    banner = f"Fathom {__version__} on http://127.0.0.1:{port}"
    assert output[bottom + 1].startswith(banner), output[bottom:]
    assert [line for line in output[bottom + 2 : running] if line.strip()] == []  # nothing after it
    key = next(word for word in box.split() if word.startswith("fathom-"))
    password = box.split("Password", 1)[1].split()[0]
    assert f"http://127.0.0.1:{port}/" in box
    assert "fathom users reset-password root" in box

    second_port = _free_port()
    again = subprocess.Popen(
        [sys.executable, "-m", "fathom", "serve"],
        env={**env, "FATHOM_PORT": str(second_port)},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    base = f"http://127.0.0.1:{second_port}"
    try:
        wait_healthy(base, again)
        assert sign_in_status(base, "root", password) == 200
        whoami = httpx.get(base + "/api/v1/whoami", headers={"Authorization": f"Bearer {key}"}, timeout=30)
        assert whoami.json()["data"]["role"] == "owner"
    finally:
        again.terminate()
        second_start, _ = again.communicate(timeout=15)
    assert "First start" not in second_start and "fathom-" not in second_start


def wait_healthy(base: str, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{base}/api/health", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        assert proc.poll() is None and time.monotonic() < deadline, "fathom serve did not start"
        time.sleep(0.2)


def test_the_printed_address_is_one_a_browser_can_open() -> None:
    from fathom.cli.start_banner import _base_url

    assert _base_url("127.0.0.1", 3000) == "http://127.0.0.1:3000"
    assert _base_url("0.0.0.0", 8080) == "http://127.0.0.1:8080"  # every interface: loopback is one
    assert _base_url("::1", 3000) == "http://[::1]:3000"
    assert _base_url("fathom.internal", 3000) == "http://fathom.internal:3000"
