"""The scaffolding of the killed-worker tests (``tests/cli/test_killed_*.py``): a ``fathom worker`` process
killed with SIGKILL half-way through a job, then, once its lease has run out, ``fathom worker --once``
finishing the job. The tests keep their own checks; this module only runs the processes.

    env = worker_env(tmp_path)
    assert db_upgrade(env).returncode == 0
    ...  # queue the job
    with WorkerProcess(env) as worker:
        for state in worker.poll(lambda: read(settings, current_state)):
            if half_way(state):
                break
            assert worker.running(), state
    # killed (SIGKILL) when the block ends, whatever happened inside it
    finisher = finish_after_lease(env)
    assert finisher.returncode == 0, finisher.stderr
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from fathom.config import Settings
from fathom.platform import Platform

T = TypeVar("T")

LEASE_SECONDS = 2  # short, so the dead worker's job is claimable again soon after the kill
POLL_SECONDS = 0.05  # the half-way window is a few model calls wide: look often
FINISH_TIMEOUT_S = 300


def worker_env(tmp_path: Path, database_url: str | None = None, **fathom: str) -> dict[str, str]:
    """The environment of the test's ``fathom`` processes: this one's without its ``FATHOM_*``
    variables, then the data folder, quiet logs, the short lease, the database and ``fathom``'s own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FATHOM_")}
    if database_url:
        env["FATHOM_DATABASE_URL"] = database_url
    env.update(
        {
            "FATHOM_DATA_DIR": str(tmp_path / "data"),
            "FATHOM_LOG_LEVEL": "warning",
            "FATHOM_JOB_LEASE_SECONDS": str(LEASE_SECONDS),
            **fathom,
        }
    )
    return env


def worker_settings(tmp_path: Path, database_url: str | None = None, **fields: Any) -> Settings:
    """The settings of the test's own reads and writes: the processes' data folder, database and lease."""
    return Settings(
        data_dir=tmp_path / "data", database_url=database_url, job_lease_seconds=LEASE_SECONDS, **fields
    )


def db_upgrade(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``fathom db upgrade`` with ``env``'s ``FATHOM_*`` settings, run by the same Typer app in this
    process: the workers' schema, without paying a fresh interpreter's import of fathom (issue 33).
    An exception the command does not turn into a clean exit is raised."""
    from typer.testing import CliRunner

    from fathom.cli import app

    settings: dict[str, str | None] = {k: None for k in os.environ if k.startswith("FATHOM_")}
    settings.update({k: v for k, v in env.items() if k.startswith("FATHOM_")})
    result = CliRunner().invoke(app, ["db", "upgrade"], env=settings)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return subprocess.CompletedProcess(["fathom", "db", "upgrade"], result.exit_code, result.stdout, "")


def read(settings: Settings, work: Callable[[Platform], Awaitable[T]]) -> T:
    """``work(platform)`` on a platform of ``settings`` built for it and closed after it."""
    platform = Platform.build(settings)

    async def go() -> T:
        try:
            return await work(platform)
        finally:
            await platform.db.close()

    return asyncio.run(go())


class WorkerProcess:
    """``fathom worker`` (running until stopped) in a child process, killed with SIGKILL when the ``with``
    block ends, however it ends."""

    def __init__(self, env: dict[str, str], *, deadline_s: float = 120) -> None:
        self.env = env
        self.deadline_s = deadline_s
        self.process: subprocess.Popen[bytes] | None = None
        self.deadline = 0.0
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 - read after the process is killed (log())

    def __enter__(self) -> WorkerProcess:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "fathom", "worker"],
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=self._log,
        )
        self.deadline = time.monotonic() + self.deadline_s
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def log(self) -> str:
        """What the worker wrote to stderr (warnings and errors: the log level is ``warning``)."""
        self._log.seek(0)
        return self._log.read().decode(errors="replace")

    def running(self) -> bool:
        """The process is alive and the deadline to reach the state waited for has not passed."""
        assert self.process is not None
        return self.process.poll() is None and time.monotonic() < self.deadline

    def poll(self, state: Callable[[], T]) -> Iterator[T]:
        """``state()`` again and again, :data:`POLL_SECONDS` apart, for as long as the caller iterates."""
        while True:
            yield state()
            time.sleep(POLL_SECONDS)


class ModelGate:
    """Holds a scripted model's answers after the first ``answered`` requests until :meth:`open`: the worker
    then waits on the model with some items written and the rest left, however slow the machine, so the
    test's poll cannot miss the half-way state (under load a poll took longer than the whole training and
    saw the job done) and the kill always lands there. A held answer goes, after :meth:`open`, to the
    killed worker's closed connection."""

    def __init__(self, answered: int) -> None:
        self.answered = answered
        self._asked = 0
        self._lock = threading.Lock()
        self._opened = False
        self._held: tuple[asyncio.AbstractEventLoop, asyncio.Event] | None = None

    async def turn(self) -> None:
        """Awaited by the script (on the scripted server's event loop) before it answers a request."""
        with self._lock:
            self._asked += 1
            if self._asked <= self.answered or self._opened:
                return
            if self._held is None:
                self._held = (asyncio.get_running_loop(), asyncio.Event())
            event = self._held[1]
        await event.wait()

    def open(self) -> None:
        """Answer every request from now on (the held ones too)."""
        with self._lock:
            self._opened = True
            held = self._held
        if held is not None:
            loop, event = held
            loop.call_soon_threadsafe(event.set)


def finish_after_lease(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Wait for the killed worker's lease to run out, then ``fathom worker --once``: it claims the job
    again and runs what is ready now to the end (its output captured)."""
    time.sleep(LEASE_SECONDS + 0.5)  # the dead worker's lease runs out
    return subprocess.run(
        [sys.executable, "-m", "fathom", "worker", "--once"],
        env=env,
        capture_output=True,
        text=True,
        timeout=FINISH_TIMEOUT_S,
    )
