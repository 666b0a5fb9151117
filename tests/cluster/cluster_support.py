"""Helpers of the several-machines test: ``fathom`` subprocesses on loopback and a real redis-server."""

from __future__ import annotations

import contextlib
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


def printed_admin_key(process: FathomProcess) -> str | None:
    """The admin API key ``fathom serve`` printed on the first start (None when this one printed none)."""
    for line in process.lines:
        for word in line.split():
            if word.startswith("fathom-"):
                return word
    return None


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


class RedisServer:
    """A loopback redis-server without persistence that a test can stop and start again on its port."""

    def __init__(self, binary: str, workdir: Path) -> None:
        self.binary = binary
        self.workdir = workdir
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        args = ["--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen(
            [self.binary, *args, "--dir", str(self.workdir)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                assert time.monotonic() < deadline, "redis-server did not start"
                time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None


@contextmanager
def redis_process(workdir: Path) -> Iterator[RedisServer]:
    """A started :class:`RedisServer`; skips when redis-server is not installed."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    server = RedisServer(binary, workdir)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@contextmanager
def redis_server(workdir: Path) -> Iterator[str]:
    """A loopback redis-server without persistence (its URL); skips when it is not installed."""
    with redis_process(workdir) as server:
        yield server.url


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


class TcpProxy:
    """A loopback TCP relay to ``target_port`` that a test can cut (every connection closed, new ones
    refused: what clients of a stopped database server see) and restore, on the same port."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = free_port()
        self._listener: socket.socket | None = None
        self._connections: list[socket.socket] = []
        self._lock = threading.Lock()

    def up(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(128)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def down(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() blocked on it (close alone does not)
            listener.close()
        with self._lock:
            connections, self._connections = self._connections, []
        for sock in connections:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # closed by down()
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=5)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self._lock:
                self._connections += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while chunk := source.recv(65536):
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
