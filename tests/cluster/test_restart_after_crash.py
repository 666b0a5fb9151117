"""A supervisor's restart: ``fathom serve`` killed with SIGKILL while clients hold connections comes back
on the same port at once. The killed process leaves its accepted sockets in TIME-WAIT (it closed first);
uvicorn binds over them (``SO_REUSEADDR``), so the port check before it must not refuse either."""

from __future__ import annotations

import errno
import socket
import time
from pathlib import Path

import pytest
from cluster_support import FathomProcess, fathom_env, free_port, wait_healthy

CONNECTIONS = 8


def _open_keep_alive(port: int) -> list[socket.socket]:
    """``CONNECTIONS`` keep-alive HTTP/1.1 connections, each with one request answered."""
    sockets = []
    for _ in range(CONNECTIONS):
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        sock.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n")
        assert sock.recv(4096).startswith(b"HTTP/1.1 200")
        sockets.append(sock)
    return sockets


def _plain_bind_refused(port: int) -> bool:
    """Whether a bind without SO_REUSEADDR (the old port check) fails on this port now."""
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as exc:
            return exc.errno == errno.EADDRINUSE
    return False


def test_a_killed_server_restarts_on_its_port_at_once(tmp_path: Path) -> None:
    port = free_port()
    env = fathom_env(
        data_dir=str(tmp_path / "data"), port=str(port), workers="0", seed_demo="false", log_level="warning"
    )
    base = f"http://127.0.0.1:{port}"
    first = FathomProcess("serve-1", ["serve"], env, tmp_path)
    try:
        wait_healthy(base, first)
        clients = _open_keep_alive(port)
        first.process.kill()
        first.process.wait(timeout=10)
        for sock in clients:  # the server side closed first: its sockets stay in TIME-WAIT
            sock.close()
    finally:
        first.stop()
    if not _plain_bind_refused(port):
        pytest.skip("this kernel left no TIME-WAIT socket on the port; nothing to check")
    started = time.monotonic()
    second = FathomProcess("serve-2", ["serve"], env, tmp_path)
    try:
        wait_healthy(base, second)  # the wait the first start gets: a loaded machine starts fathom slowly
        print(f"healthy again {time.monotonic() - started:.2f} s after the restart")  # for docs/benchmarks.md
        assert not any("already in use" in line for line in second.lines)
    finally:
        second.stop()
