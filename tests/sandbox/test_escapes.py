"""Escape attempts: each is contained with a clear error and the test process is unharmed.

Each attempt runs twice where it makes sense: with the language guards (the default) and with the
guards off, so the OS layer (network namespace, dropped uid, rlimits, seccomp) is shown to hold on its
own. The table of Python/JavaScript escape cases lives in ``test_escape_table.py``.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from sandbox_limits import FAST

from fathom.sandbox import SandboxRunner
from fathom.sandbox.runner import _UID_BASE, _UID_SPAN

pytestmark = pytest.mark.usefixtures("isolated")
NO_GUARDS = replace(FAST, language_guards=False)


@pytest.fixture
def runner() -> SandboxRunner:
    return SandboxRunner(FAST)


@pytest.fixture
def planted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """A root-only file and a world-readable file outside any work dir."""
    base = Path("/tmp") / f"fathom-escape-{os.getpid()}"
    base.mkdir(exist_ok=True)
    base.chmod(0o755)
    private = base / "private.txt"
    public = base / "public.txt"
    private.write_text("PLANTED-PRIVATE")
    private.chmod(0o600)
    public.write_text("PLANTED-PUBLIC")
    public.chmod(0o644)
    yield private, public
    private.unlink()
    public.unlink()
    base.rmdir()


@pytest.fixture
def loopback_server() -> Iterator[tuple[int, list[int]]]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.1)
    accepted: list[int] = []
    yield server.getsockname()[1], accepted
    try:
        while True:
            conn, _ = server.accept()
            accepted.append(1)
            conn.close()
    except OSError:
        pass
    server.close()


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _ours_or_orphaned(pid: int) -> bool:
    """Whether a sandbox process counts here: one this process started (its descendant) or an orphan
    re-parented to init, which outlived its run whoever started it. Not counted: one under the live run
    of another process (a second pytest-xdist worker, another checkout's tests on a shared machine),
    whose ancestors reach a live process other than init without passing through this one."""
    mine, parent = os.getpid(), _parent(pid)
    if parent == 1:
        return True
    while parent > 1:
        if parent == mine:
            return True
        parent = _parent(parent)
    return False  # under another live process, or gone meanwhile


def _sandbox_processes() -> list[int]:
    """Pids of live processes owned by a sandbox run uid that this process started or that outlived
    their run (there must be none after a run)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                uid = entry.stat().st_uid
            except FileNotFoundError:
                continue
            if _UID_BASE <= uid < _UID_BASE + _UID_SPAN and _ours_or_orphaned(int(entry.name)):
                found.append(int(entry.name))
    return found


async def test_reading_files_outside_the_work_dir_is_refused(
    runner: SandboxRunner, planted: tuple[Path, Path]
) -> None:
    private, public = planted
    for path in ("/etc/shadow", str(private), str(public)):
        result = await runner.run_python(f"def main():\n    return open({path!r}).read()")
        assert result.to_wire() == {
            "success": False,
            "message": f"File access outside the sandbox work dir is not allowed: {path!r}",
        }


async def test_os_layer_hides_the_host_filesystem_without_guards(
    runner: SandboxRunner, planted: tuple[Path, Path]
) -> None:
    private, public = planted
    for path in ("/etc/shadow", str(private), str(public), "/work/main/pyproject.toml"):
        py = await runner.run_python(f"def main():\n    return open({path!r}).read()", limits=NO_GUARDS)
        assert not py.success and "No such file or directory" in py.message
        js = await runner.run_javascript(
            f"function main() {{ return require('fs').readFileSync({path!r}, 'utf8') }}", limits=NO_GUARDS
        )
        assert not js.success and "ENOENT" in js.message
    listing = await runner.run_javascript(
        "function main() { return require('fs').readdirSync('/').sort() }", limits=NO_GUARDS
    )
    assert set(listing.code_return) <= {"bin", "dev", "lib", "lib64", "proc", "sbin", "tmp", "usr", "work"}


async def test_os_layer_runs_code_as_an_unprivileged_uid(runner: SandboxRunner) -> None:
    js = (
        "function main() { const fs = require('fs'); let environ;"
        " try { fs.readFileSync('/proc/1/environ'); environ = 'read' } catch (e) { environ = e.code }"
        " let write; try { fs.writeFileSync('/usr/x', 'x'); write = 'ok' } catch (e) { write = e.code }"
        " return {uid: process.getuid(), environ, write, cwd: process.cwd()} }"
    )
    result = await runner.run_javascript(js, limits=NO_GUARDS)
    assert result.success, result.message
    assert result.code_return["uid"] >= 1_000_000
    assert result.code_return["environ"] == "EACCES"  # the namespace's init is still root
    assert result.code_return["write"] in ("EROFS", "EACCES")
    assert result.code_return["cwd"] == "/work"


async def test_guarded_javascript_has_no_require_process_or_eval(runner: SandboxRunner) -> None:
    result = await runner.run_javascript("function main() { return typeof require + ',' + typeof process }")
    assert result.code_return == "undefined,undefined"
    escape = "function main() { return this.constructor.constructor('return process')().pid }"
    result = await runner.run_javascript(escape)
    assert not result.success and "Code generation from strings disallowed" in result.message


@pytest.fixture
def own_temp_root() -> Iterator[Path]:
    """A temporary root of this test's runner alone: no other process's live run shows up in it (another
    pytest-xdist worker's, or another checkout's tests on a shared machine, whose runs use /tmp)."""
    root = Path(tempfile.mkdtemp(prefix="fathom-sandbox-test-"))
    root.chmod(0o755)  # as /tmp is traversable
    yield root
    shutil.rmtree(root, ignore_errors=True)


async def test_the_work_dir_is_private_writable_and_removed(own_temp_root: Path) -> None:
    runner = SandboxRunner(FAST, temp_root=str(own_temp_root))
    code = (
        "def main():\n"
        "    with open('note.txt', 'w') as f:\n"
        "        f.write('x' * 10)\n"
        "    return open('note.txt').read()\n"
    )
    result = await runner.run_python(code)
    assert result.code_return == "x" * 10
    leftovers = await asyncio.to_thread(lambda: list(own_temp_root.glob("fathom-sandbox-*")))
    assert leftovers == []


async def test_sockets_cannot_reach_a_loopback_server(
    runner: SandboxRunner, loopback_server: tuple[int, list[int]]
) -> None:
    port, accepted = loopback_server
    py = (
        "import socket\ndef main():\n    s = socket.socket()\n"
        f"    s.connect(('127.0.0.1', {port}))\n    return 'connected'"
    )
    guarded = await runner.run_python(py)
    assert guarded.to_wire() == {
        "success": False,
        "message": "Import of module 'socket' is not allowed in the sandbox",
    }
    # Without the guards the network namespace still has no route anywhere, loopback included.
    result = await runner.run_python(py, limits=NO_GUARDS)
    assert result.to_wire() == {"success": False, "message": "[Errno 101] Network is unreachable"}
    js = (
        "function main() { return new Promise((resolve, reject) => {"
        f" const s = require('net').connect({port}, '127.0.0.1');"
        " s.on('connect', () => resolve('connected')); s.on('error', reject); }) }"
    )
    result = await runner.run_javascript(js, limits=NO_GUARDS)
    assert not result.success and "ENETUNREACH" in result.message
    await asyncio.sleep(0.05)
    assert accepted == []


async def test_fork_bomb_is_contained(runner: SandboxRunner) -> None:
    guarded = await runner.run_python("import os\ndef main():\n    while True:\n        os.fork()")
    assert not guarded.success
    bomb = "import os\ndef main():\n    while True:\n        os.fork()"
    result = await runner.run_python(bomb, limits=NO_GUARDS)
    assert not result.success and "Resource temporarily unavailable" in result.message
    # Threads count against RLIMIT_NPROC too (Node cannot start processes: execve is refused).
    js = (
        "function main() { const { Worker } = require('worker_threads');"
        " for (let i = 0; i < 200; i++) new Worker('setInterval(() => {}, 1000)', { eval: true });"
        " return new Promise((resolve) => setTimeout(resolve, 2000)) }"
    )
    result = await runner.run_javascript(js, limits=NO_GUARDS)
    # the process limit (EAGAIN) or, when the workers' memory comes first, the memory limit contains it
    assert not result.success and ("EAGAIN" in result.message or result.reason == "memory"), result
    assert _sandbox_processes() == []


async def test_memory_bomb_is_contained(runner: SandboxRunner) -> None:
    py = "def main():\n    x = []\n    while True:\n        x.append(' ' * 10**6)"
    result = await runner.run_python(py)
    assert result.to_wire() == {"success": False, "message": "Memory limit exceeded (128 MB)"}
    js = "function main() { const a = []; for (;;) a.push(new Array(1e6).fill(Math.random())) }"
    result = await runner.run_javascript(js)
    assert result.reason == "memory" and result.message == "Memory limit exceeded (128 MB)"


async def test_infinite_loop_hits_the_cpu_limit(runner: SandboxRunner) -> None:
    result = await runner.run_python("def main():\n    while True:\n        pass")
    assert result.to_wire() == {"success": False, "message": "CPU time limit exceeded (1s)"}
    result = await runner.run_javascript("function main() { for (;;) {} }")
    assert result.reason == "cpu"


async def test_sleeping_forever_hits_the_wall_time_limit(runner: SandboxRunner) -> None:
    limits = replace(FAST, wall_seconds=1.0)
    result = await runner.run_python("import time\ndef main():\n    time.sleep(60)", limits=limits)
    assert result.to_wire() == {"success": False, "message": "Execution timed out after 1s (wall time limit)"}
    result = await runner.run_javascript("function main() { return new Promise(() => {}) }", limits=limits)
    assert result.reason == "timeout"
    assert _sandbox_processes() == []


@pytest.mark.parametrize(
    "code",
    [
        "def main():\n    while True:\n        print('x' * 1000)",
        "def main():\n    return 'x' * 5_000_000",
    ],
)
async def test_huge_output_is_cut_off(runner: SandboxRunner, code: str) -> None:
    result = await runner.run_python(code)
    assert result.to_wire() == {"success": False, "message": "Output limit exceeded (64000 bytes)"}


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
async def test_huge_output_to_the_raw_streams_is_cut_off(runner: SandboxRunner, stream: str) -> None:
    js = (
        "async function main() { for (;;) {"
        f" process.{stream}.write('x'.repeat(10000)); await new Promise((r) => setTimeout(r, 0)) }} }}"
    )
    result = await runner.run_javascript(js, limits=NO_GUARDS)
    assert result.to_wire() == {"success": False, "message": "Output limit exceeded (64000 bytes)"}


async def test_the_parent_is_unharmed_after_every_escape(runner: SandboxRunner) -> None:
    result = await runner.run_python("def main(a):\n    return a", {"a": 1})
    assert result.success and result.code_return == {"a": 1}
    assert _sandbox_processes() == []


async def test_files_larger_than_the_limit_cannot_be_written(runner: SandboxRunner) -> None:
    limits = replace(FAST, file_bytes=1_000_000)
    py = "def main():\n    with open('big.bin', 'wb') as f:\n        f.write(b'x' * 2_000_000)"
    result = await runner.run_python(py, limits=limits)
    assert result.to_wire() == {"success": False, "message": "[Errno 27] File too large"}
    js = (
        "function main() { require('fs').writeFileSync('big.bin', "
        "require('buffer').Buffer.alloc(2000000)); return 1 }"
    )
    result = await runner.run_javascript(js, limits=replace(limits, language_guards=False))
    assert not result.success and "EFBIG" in result.message


async def test_only_the_runs_own_processes_are_visible(runner: SandboxRunner) -> None:
    js = "function main() { return require('fs').readdirSync('/proc').filter((x) => /^[0-9]+$/.test(x)) }"
    result = await runner.run_javascript(js, limits=NO_GUARDS)
    assert sorted(result.code_return) == ["1", "2"]  # the namespace's init and the runner itself
