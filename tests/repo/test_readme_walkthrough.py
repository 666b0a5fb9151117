"""The README from top to bottom, as a newcomer follows it (issue 31): every step is parsed from the README's
own text and run, so the README cannot drift from what works.

- ``make run`` is ``.venv/bin/fathom serve`` (read from the Makefile; the test never runs ``make``, which
  would install things), started here as ``python -m fathom serve`` in an empty folder (a fresh clone's
  ``./data``) on a free port through the variable the README names for the port, and the host one;
- the first start prints the box the README shows (same rows, in order) after every log line, then the
  README's "Fathom … on …" line; a later start prints only that line;
- the scripted model is started with the README's command and prints what the README says; Fathom is
  restarted with the README's variables pointing at it;
- root signs in with the printed password; the README's ``bash`` blocks run in ``bash`` (curl and jq, as
  written; only the port, the key and — as the README says — the model name are substituted): health, a
  knowledge base imported, waited for and searched, an app created and published, a share link created
  and a visitor answered through it;
- ``fathom keys create`` prints a new key; the README's Python block runs with the real ``openai`` SDK and
  that key: ``client.models.list()`` lists the scripted model and the chat answers;
- ``fathom doctor`` with the same variables finds the model.

A README that names a variable, command, route or output that does not work fails here."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PORT_IN_README = "3000"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


def _block_with(lang: str, needle: str) -> str:
    found = [block for block in _blocks(lang) if needle in block]
    assert len(found) == 1, f"README: expected one ```{lang} block with {needle!r}, found {len(found)}"
    return found[0]


def _env_assignments(line: str) -> dict[str, str]:
    return dict(re.findall(r"\b(FATHOM_[A-Z_]+)=(\S+)", line))


@dataclass
class Process:
    """A process started by the test, its stdout and stderr read line by line into ``lines``."""

    popen: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, pattern: str, timeout: float = 180) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(self.lines):
                match = re.search(pattern, line)
                if match:
                    return match
            if self.popen.poll() is not None:
                break
            time.sleep(0.1)
        raise AssertionError(f"no line matching {pattern!r}; output:\n" + "\n".join(self.lines[-60:]))

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()


@dataclass
class Newcomer:
    """A fresh folder, the environment a shell there would have, and the processes started from it."""

    cwd: Path
    env: dict[str, str]
    processes: list[Process] = field(default_factory=list)

    def start(self, *args: str, env: dict[str, str] | None = None) -> Process:
        popen = subprocess.Popen(
            [sys.executable, *args],
            cwd=self.cwd,
            env={**self.env, **(env or {})},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        process = Process(popen)
        self.processes.append(process)
        return process

    def run(self, args: list[str], env: dict[str, str] | None = None, timeout: float = 120) -> str:
        done = subprocess.run(
            args,
            cwd=self.cwd,
            env={**self.env, **(env or {})},
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert done.returncode == 0, f"{args[:3]} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
        return done.stdout


@pytest.fixture
def newcomer(tmp_path: Path) -> Iterator[Newcomer]:
    if shutil.which("curl") is None or shutil.which("jq") is None:
        pytest.skip("the README's shell steps need curl and jq")
    env = {k: v for k, v in os.environ.items() if not k.startswith("FATHOM_")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["PYTHONUNBUFFERED"] = "1"
    env["COLUMNS"] = "120"  # the box is as wide as its rows; a narrow pipe would wrap them
    person = Newcomer(tmp_path, env)
    try:
        yield person
    finally:
        for process in reversed(person.processes):
            process.stop()


def _make_run_is_fathom_serve() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^run:.*\n\t(.+)$", makefile, flags=re.M)
    assert recipe is not None and recipe.group(1).strip() == "$(BIN)/fathom serve", (
        "make run is not fathom serve"
    )
    assert "make run    # creates .venv, installs Fathom, serves http://127.0.0.1:3000" in README


def _port_and_host_variables() -> tuple[str, str]:
    port = re.search(r"`(FATHOM_\w+)=(\d+) make run` serves http://127\.0\.0\.1:(\d+)", README)
    assert port is not None and port.group(2) == port.group(3), "README: the port example"
    host = re.search(r"`(FATHOM_\w+)=0\.0\.0\.0 make run` listens on\s+every interface", README)
    assert host is not None, "README: the host example"
    return port.group(1), host.group(1)


def _credentials_box(lines: list[str]) -> tuple[int, int, dict[str, str]]:
    """(first line, last line, label → value) of the box printed by the first start."""
    top = next(i for i, line in enumerate(lines) if "First start: your credentials" in line)
    bottom = next(i for i in range(top + 1, len(lines)) if lines[i].lstrip().startswith("╰"))
    rows: dict[str, str] = {}
    for line in lines[top + 1 : bottom]:
        match = re.match(r"\s*│ (\S.*?)\s{2,}(\S+)\s*│", line)
        if match:
            rows[match.group(1)] = match.group(2)
    return top, bottom, rows


def _readme_box() -> tuple[list[str], str]:
    text = _block_with("text", "First start: your credentials")
    labels = [
        m.group(1) for m in re.finditer(r"│ (\S.*?)\s{2,}\S+\s*│", text) if "only this once" not in m.group(1)
    ]
    ready = [line for line in text.splitlines() if line.startswith("Fathom ")]
    assert len(ready) == 1
    return labels, ready[0]


def _ready_pattern(readme_line: str, port: int) -> str:
    pattern = re.escape(readme_line.replace(PORT_IN_README, str(port)))
    return "^" + re.sub(r"Fathom\\ [0-9.]+\\ on", r"Fathom\\ \\S+\\ on", pattern) + "$"


def _start_server(person: Newcomer, env: dict[str, str], port: int) -> tuple[Process, int]:
    _, ready_line = _readme_box()
    server = person.start("-m", "fathom", "serve", env=env)
    pattern = _ready_pattern(ready_line, port)
    server.wait_for(pattern)
    index = next(i for i, line in enumerate(server.lines) if re.search(pattern, line))
    return server, index


def _shell(person: Newcomer, script: str, port: int, key: str) -> str:
    script = script.replace(f"localhost:{PORT_IN_README}", f"localhost:{port}")
    script = script.replace(f"127.0.0.1:{PORT_IN_README}", f"127.0.0.1:{port}")
    script = script.replace("fathom-3kq…", key).replace("qwen2.5", "scripted-chat")
    return person.run(["bash", "-euo", "pipefail", "-c", script], timeout=180)


def test_the_readme_from_top_to_bottom(newcomer: Newcomer) -> None:
    person = newcomer
    _make_run_is_fathom_serve()
    port_var, host_var = _port_and_host_variables()
    port = _free_port()
    where = {port_var: str(port), host_var: "127.0.0.1"}

    # 1. Start it: the first start's box, after every log line, then the address line
    server, ready_at = _start_server(person, where, port)
    labels, _ = _readme_box()
    top, bottom, box = _credentials_box(server.lines)
    assert list(box) == labels, (list(box), labels)
    assert bottom + 1 == ready_at, server.lines[bottom : ready_at + 1]  # nothing between the box and it
    logs = [
        i for i, line in enumerate(server.lines) if re.search(r"alembic|migrat|Uvicorn|startup", line, re.I)
    ]
    assert logs and max(logs) < top, "a start-up log line came after the credentials box"
    assert box["Console"] == f"http://127.0.0.1:{port}/" and box["User"] == "root"
    assert box["API key"].startswith("fathom-") and (person.cwd / "data" / "fathom.db").exists()
    password, admin_key = box["Password"], box["API key"]
    server.stop()

    # 3. A model: the scripted one, as the README starts it; Fathom again with the README's variables
    model_block = _block_with("bash", "-m fathom.testing")
    model_command, restart = (line for line in model_block.splitlines() if line.strip())
    model_port = _free_port()
    command = model_command.split("#")[0].replace("8001", str(model_port)).split()
    assert command[0] == ".venv/bin/python" and command[1:3] == ["-m", "fathom.testing"]
    model = person.start(*command[1:])
    printed = re.escape(f"scripted OpenAI server on http://127.0.0.1:{model_port}/v1")
    model.wait_for(printed, timeout=60)
    assert "scripted OpenAI server on http://127.0.0.1:8001/v1" in README.replace("\n", " ")
    model_env = {k: v.replace("8001", str(model_port)) for k, v in _env_assignments(restart).items()}
    assert restart.rstrip().endswith("make run") and set(model_env) == {
        "FATHOM_OPENAI_BASE_URL",
        "FATHOM_CHAT_MODEL",
    }
    hint = model.wait_for(r"FATHOM_OPENAI_BASE_URL=\S+ FATHOM_CHAT_MODEL=\S+", timeout=10).group(0)
    assert _env_assignments(hint) == model_env  # what it prints is what the README says to set
    server, ready_at = _start_server(person, {**where, **model_env}, port)
    assert "Later starts print only the last line." in README
    assert not any("First start: your credentials" in line for line in server.lines)

    base = f"http://127.0.0.1:{port}"
    assert "sign in as `root` with that password" in README
    login = httpx.post(
        f"{base}/api/support/user/account/loginByPassword", json={"username": "root", "password": password}
    )
    assert login.status_code == 200 and "fathom_session" in login.cookies, login.text

    # 1.–5. the README's shell steps, run as written
    steps = [
        _block_with("bash", "export KEY="),
        _block_with("bash", "dataset/create"),
        _block_with("bash", "app/create"),
        _block_with("bash", "outLink/create"),
    ]
    assert "use `scripted-chat` where they say `qwen2.5`" in README
    # one block after another, as pasted into one terminal (each ends on a new line there)
    output = _shell(person, "\necho\n".join([*steps, 'echo "APP=$APP"']), port, admin_key)
    assert '"version"' in output and "Refunds are paid to the original card" in output, output
    app_id = re.findall(r"^APP=(\w+)$", output, flags=re.M)[-1]
    visitor_answer = [line for line in output.splitlines() if line.strip()][-2]
    assert visitor_answer == "You said: When do refunds arrive?", output  # the scripted model echoes

    # 4. The SDK, with a key made as the README says
    assert ".venv/bin/fathom keys create" in README
    new_key = (
        person.run([sys.executable, "-m", "fathom", "keys", "create"], env=model_env).strip().splitlines()[-1]
    )
    assert new_key.startswith("fathom-") and new_key != admin_key
    python = _block_with("python", "client.models.list()")
    python = python.replace(f"127.0.0.1:{PORT_IN_README}", f"127.0.0.1:{port}").replace(
        "fathom-3kq…", new_key
    )
    python = python.replace("<APP>", app_id).replace("qwen2.5", "scripted-chat")
    printed_lines = person.run([sys.executable, "-c", python]).strip().splitlines()
    assert printed_lines[0] == "['scripted-chat']", printed_lines
    assert printed_lines[1] == "You said: When do refunds arrive?", printed_lines

    # `fathom doctor` (with the same variables) checks that the endpoint answers and lists that model
    doctor = person.run([sys.executable, "-m", "fathom", "doctor"], env={**where, **model_env})
    assert "scripted-chat" in doctor and "not among them" not in doctor, doctor
