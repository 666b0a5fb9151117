"""The README from top to bottom, as a newcomer follows it (issue 31): every step is parsed from the README's
own text and run, so the README cannot drift from what works.

- a fresh clone: ``git clone`` of this repository (its committed files only) into a temporary folder, its
  ``.venv`` the virtualenv running the tests (a link, so nothing is installed: ``pyproject.toml`` is dated
  by its last commit, as an older checkout's would be, and ``make -n run`` must show
  ``.venv/bin/fathom serve`` alone, else the test skips with the reason; ``PYTHONPATH`` is the clone's
  ``src``, checked to be the code that runs); there ``make run`` runs as the README writes it, on a free
  port through the variable the README names for the port, and the host one; every command the README
  gives (``.venv/bin/python``, ``.venv/bin/fathom …``) runs literally in the clone;
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
- ``fathom doctor`` with the same variables finds the model;
- with the server still running and the data the README made, Chromium takes the pictures
  ``docs/console.md`` shows (``readme_screenshots.py``; into ``docs/images/console/`` with
  ``FATHOM_UPDATE_SCREENSHOTS=1``, else into a temporary folder), each checked not blank.

A README that names a variable, command, route or output that does not work fails here."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

import httpx
import pytest
from readme_screenshots import SCENES, SHOT_BY_CONSOLE_TESTS, Visit, browser_unavailable, take

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
    """A process started by the test in a session of its own (``make run`` and the server it starts are
    stopped together), its stdout and stderr read line by line into ``lines``."""

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
            os.killpg(self.popen.pid, signal.SIGTERM)  # Ctrl-C's group: make and the server under it
            try:
                self.popen.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.popen.pid, signal.SIGKILL)
                self.popen.wait()
        with contextlib.suppress(ProcessLookupError):  # make's child outliving make
            os.killpg(self.popen.pid, signal.SIGKILL)


@dataclass
class Newcomer:
    """A fresh clone, the environment a shell there would have, and the processes started from it."""

    cwd: Path
    env: dict[str, str]
    processes: list[Process] = field(default_factory=list)

    def start(self, *args: str, env: dict[str, str] | None = None) -> Process:
        popen = subprocess.Popen(
            list(args),
            cwd=self.cwd,
            env={**self.env, **(env or {})},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
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


def _clone(into: Path) -> Path:
    """``git clone`` of the repository the tests run in; its ``pyproject.toml`` dated by its last commit."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        _skip("the fresh clone needs git and this repository's .git")
    clone = into / "fathom"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, timeout=120)
    dated = subprocess.run(
        ["git", "log", "-1", "--format=%ct", "--", "pyproject.toml"],
        cwd=clone,
        capture_output=True,
        text=True,
        check=True,
    )
    committed = int(dated.stdout.strip())
    os.utime(clone / "pyproject.toml", (committed, committed))
    return clone


#: what a parent ``make`` (``make test``) hands its children; a newcomer's shell has none of it, and with
#: it ``make -n run`` prints "Entering directory" lines and shares the parent's jobserver
_MAKE_VARIABLES = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "MAKE_TERMOUT", "MAKE_TERMERR")


def _shell_env() -> dict[str, str]:
    """This process's environment as a newcomer's shell would have it: no make variables, and not the
    suite's low password-hashing cost (tests/conftest.py): the walkthrough's server hashes as shipped."""
    return {
        k: v
        for k, v in os.environ.items()
        if k not in _MAKE_VARIABLES and not k.startswith("FATHOM_PASSWORD_HASH_")
    }


def _skip(reason: str) -> NoReturn:
    """Skip with the reason printed; in CI (``FATHOM_REQUIRE_README_WALKTHROUGH=1``, set by ``.ci/run``)
    a walkthrough that cannot run is a failure, not a skip."""
    print(f"SKIP {reason}")
    if os.environ.get("FATHOM_REQUIRE_README_WALKTHROUGH") == "1":
        pytest.fail(f"the README walkthrough must run here: {reason}")
    pytest.skip(reason)


def _reuse_the_virtualenv(clone: Path) -> None:
    """``clone/.venv`` is the virtualenv running the tests, and ``make run`` would install nothing."""
    venv = Path(sys.prefix)
    if venv == Path(sys.base_prefix) or not (venv / ".installed-run").exists():
        _skip(f"the tests do not run in a virtualenv made by make ({venv}): make run would install")
    (clone / ".venv").symlink_to(venv, target_is_directory=True)
    dry = subprocess.run(
        ["make", "-n", "run"], cwd=clone, env=_shell_env(), capture_output=True, text=True, timeout=30
    )
    commands = [line for line in dry.stdout.splitlines() if line.strip()]
    if dry.returncode != 0 or commands != [".venv/bin/fathom serve"]:
        _skip(f"make run in a fresh clone would do more than serve ({commands}, {dry.stderr.strip()})")


@pytest.fixture(scope="module")
def newcomer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Newcomer]:
    for tool in ("make", "curl", "jq"):
        if shutil.which(tool) is None:
            _skip(f"the README's steps need {tool}")
    clone = _clone(tmp_path_factory.mktemp("newcomer"))
    _reuse_the_virtualenv(clone)
    env = {k: v for k, v in _shell_env().items() if not k.startswith("FATHOM_") and k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(clone / "src")  # the clone's code, not this checkout's (checked below)
    env["PYTHONUNBUFFERED"] = "1"
    env["COLUMNS"] = "120"  # the box is as wide as its rows; a narrow pipe would wrap them
    person = Newcomer(clone, env)
    imported = person.run([".venv/bin/python", "-c", "import fathom; print(fathom.__file__)"])
    assert Path(imported.strip()).is_relative_to(clone / "src"), imported
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
    server = person.start("make", "run", env=env)
    pattern = _ready_pattern(ready_line, port)
    server.wait_for(pattern)
    index = next(i for i, line in enumerate(server.lines) if re.search(pattern, line))
    return server, index


def _shell(person: Newcomer, script: str, port: int, key: str) -> str:
    script = script.replace(f"localhost:{PORT_IN_README}", f"localhost:{port}")
    script = script.replace(f"127.0.0.1:{PORT_IN_README}", f"127.0.0.1:{port}")
    script = script.replace("fathom-3kq…", key).replace("qwen2.5", "scripted-chat")
    return person.run(["bash", "-euo", "pipefail", "-c", script], timeout=180)


@dataclass
class Walked:
    """Where the walk through the README left the newcomer: the server still running with the model."""

    base: str
    password: str
    admin_key: str
    demo_app_id: str
    app_id: str
    reached: list[str]
    model: Process


STEPS = ["start", "model", "sign-in", "shell steps", "sdk", "doctor"]


@pytest.fixture(scope="module")
def walked(newcomer: Newcomer) -> Walked:
    """The README followed from top to bottom, each step checked as it is taken (a failed check is this
    fixture's error, with its message); the server is left running for the screenshots."""
    person = newcomer
    reached: list[str] = []
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
    reached.append("start")

    # 3. A model: the scripted one, as the README starts it; Fathom again with the README's variables
    model_block = _block_with("bash", "-m fathom.testing")
    model_command, restart = (line for line in model_block.splitlines() if line.strip())
    model_port = _free_port()
    command = model_command.split("#")[0].replace("8001", str(model_port)).split()
    assert command[0] == ".venv/bin/python" and command[1:3] == ["-m", "fathom.testing"]
    model = person.start(*command)
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
    reached.append("model")

    base = f"http://127.0.0.1:{port}"
    assert "sign in as `root` with that password" in README
    login = httpx.post(
        f"{base}/api/support/user/account/loginByPassword", json={"username": "root", "password": password}
    )
    assert login.status_code == 200 and "fathom_session" in login.cookies, login.text
    reached.append("sign-in")

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
    reached.append("shell steps")

    # 4. The SDK, with a key made as the README says
    assert ".venv/bin/fathom keys create" in README
    new_key = person.run([".venv/bin/fathom", "keys", "create"], env=model_env).strip().splitlines()[-1]
    assert new_key.startswith("fathom-") and new_key != admin_key
    python = _block_with("python", "client.models.list()")
    python = python.replace(f"127.0.0.1:{PORT_IN_README}", f"127.0.0.1:{port}").replace(
        "fathom-3kq…", new_key
    )
    python = python.replace("<APP>", app_id).replace("qwen2.5", "scripted-chat")
    printed_lines = person.run([".venv/bin/python", "-c", python]).strip().splitlines()
    assert printed_lines[0] == "['scripted-chat']", printed_lines
    assert printed_lines[1] == "You said: When do refunds arrive?", printed_lines
    reached.append("sdk")

    # `fathom doctor` (with the same variables) checks that the endpoint answers and lists that model
    doctor = person.run([".venv/bin/fathom", "doctor"], env={**where, **model_env})
    assert "scripted-chat" in doctor and "not among them" not in doctor, doctor
    reached.append("doctor")
    return Walked(base, password, admin_key, box["Demo app"], app_id, reached, model)


def test_the_readme_from_top_to_bottom(walked: Walked) -> None:
    assert walked.reached == STEPS


CONSOLE_MD = ROOT / "docs" / "console.md"
IMAGES = ROOT / "docs" / "images" / "console"
UPDATE = "FATHOM_UPDATE_SCREENSHOTS"


def test_the_console_pictures_are_taken_over_the_readme_walkthroughs_server(
    walked: Walked, tmp_path: Path
) -> None:
    """Every picture ``docs/console.md`` shows exists and has one producer: this walkthrough's server with
    the data it made (``readme_screenshots.SCENES``), or a named browser test for states this data cannot
    reach. With ``FATHOM_UPDATE_SCREENSHOTS=1`` the pictures are written over those in
    ``docs/images/console/``; without it, to a temporary folder. Each is checked not blank."""
    shown = list(dict.fromkeys(re.findall(r"images/console/([\w.-]+\.png)", CONSOLE_MD.read_text("utf-8"))))
    assert shown, "docs/console.md shows no pictures"
    missing = [name for name in shown if not (IMAGES / name).is_file()]
    assert not missing, f"docs/console.md shows missing pictures: {missing}"
    both = set(SCENES) & set(SHOT_BY_CONSOLE_TESTS)
    assert not both, f"two producers for {sorted(both)}"
    assert set(shown) == set(SCENES) | set(SHOT_BY_CONSOLE_TESTS), (
        f"no producer: {sorted(set(shown) - set(SCENES) - set(SHOT_BY_CONSOLE_TESTS))}; "
        f"not shown: {sorted(set(SCENES) | set(SHOT_BY_CONSOLE_TESTS) - set(shown))}"
    )
    for name, test in SHOT_BY_CONSOLE_TESTS.items():
        assert (ROOT / "tests" / "console" / test).is_file(), (name, test)
    reason = browser_unavailable()
    if reason:
        print(f"SKIP the console pictures: {reason}")
        pytest.skip(reason)

    into = IMAGES if os.environ.get(UPDATE) else tmp_path
    key = {"Authorization": f"Bearer {walked.admin_key}"}
    with httpx.Client(base_url=walked.base, headers=key) as client:
        stop, model = walked.model.stop, walked.model.popen

        def pause(paused: bool) -> None:  # the model's process frozen (its connections wait) or resumed
            if model.poll() is None:
                model.send_signal(signal.SIGSTOP if paused else signal.SIGCONT)

        visit = Visit(walked.base, walked.password, walked.app_id, walked.demo_app_id, client, stop, pause)
        colours = take(visit, list(SCENES), into)
    assert sorted(colours) == sorted(SCENES)
    blank = {name: count for name, count in colours.items() if count < 8 or not (into / name).is_file()}
    assert not blank, f"blank pictures (distinct colours): {blank}"
    if into == IMAGES:
        print(f"docs/images/console/: {len(colours)} pictures written")
