"""Helpers of the several-machines test: ``fathom`` subprocesses on loopback and a real redis-server."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class FathomProcess:
    """``python -m fathom <args>`` with its stdout collected line by line (stderr to a log file)."""

    def __init__(self, name: str, args: list[str], env: dict[str, str], log_dir: Path) -> None:
        self.name = name
        self.log = log_dir / f"{name}.log"
        self._log_handle = self.log.open("w")
        self.lines: list[str] = []
        self.process = subprocess.Popen(
            [sys.executable, "-m", "fathom", *args],
            env=env,
            stdout=subprocess.PIPE,
            stderr=self._log_handle,
            text=True,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))

    def wait_for_line(self, prefix: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while True:
            for line in self.lines:
                if line.strip().startswith(prefix):
                    return line.strip()
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"{self.name}: no line {prefix!r}: {self.lines}\n{self.log.read_text()}")
            time.sleep(0.05)

    def stop(self) -> None:
        """SIGTERM, then wait (the output is read to the end)."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._reader.join(timeout=5)
        self._log_handle.close()


def wait_healthy(base_url: str, process: FathomProcess, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(f"{base_url}/api/health", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if process.process.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"{process.name} is not healthy:\n{process.log.read_text()}")
        time.sleep(0.1)


def fathom_env(**settings: str) -> dict[str, str]:
    """This environment without any FATHOM_ variable, plus ``settings`` (names without the prefix)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FATHOM_")}
    env.update({f"FATHOM_{name.upper()}": value for name, value in settings.items()})
    return env


@contextmanager
def redis_server(workdir: Path) -> Iterator[str]:
    """A loopback redis-server without persistence; skips when it is not installed."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    port = free_port()
    args = ["--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    process = subprocess.Popen(
        [binary, *args, "--dir", str(workdir)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "redis-server did not start"
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=10)


def sse_frames(text: str) -> list[tuple[str | None, str]]:
    """``(event, data)`` of each SSE frame."""
    frames = []
    for block in text.strip().split("\n\n"):
        event = None
        data = ""
        for line in block.split("\n"):
            name, _, value = line.partition(": ")
            if name == "event":
                event = value
            elif name == "data":
                data = value
        frames.append((event, data))
    return frames


def streamed_text(frames: list[tuple[str | None, str]]) -> str:
    parts = []
    for event, data in frames:
        if event in (None, "answer", "fastAnswer") and data.startswith("{"):
            payload = json.loads(data)
            if payload.get("choices"):
                parts.append(payload["choices"][0]["delta"].get("content") or "")
    return "".join(parts)
