"""Run untrusted Python or JavaScript in an isolated, resource-limited child process.

Each run gets a fresh process tree in new network and PID namespaces (no network at all, no view of
other processes), a private temporary work dir, a dedicated unprivileged uid, rlimits on CPU, memory,
processes, file size and open files, and parent-side wall-time and output limits. On any breach the
whole tree is killed. The sandboxed code reaches the outside only through ``http_request``: a JSON
line to this parent, which calls the injected :data:`HttpRequestHandler` (the egress guard).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from fathom.sandbox.isolation import IsolationInfo, detect_isolation
from fathom.sandbox.types import (
    HttpRequestHandler,
    Language,
    Reason,
    SandboxError,
    SandboxLimits,
    SandboxResult,
    SandboxUnavailable,
)

_UID_BASE = 1_500_000
_UID_SPAN = 1_000_000
_STDERR_KEEP = 4096
_SIGNAL_EXIT = 128


def _package_text(name: str) -> str:
    return resources.files("fathom.sandbox").joinpath(name).read_text(encoding="utf-8")


@dataclass
class _RunState:
    """Mutable bookkeeping of one run (parent side)."""

    result: dict[str, Any] | None = None
    reason: Reason | None = None
    message: str = ""
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    stderr_tail: bytes = b""
    requests: int = 0
    ready_at: float | None = None
    extra_log: list[str] = field(default_factory=list)


class SandboxRunner:
    """Runs code per FastGPT's contract ``main(variables) -> {codeReturn, log}`` in an isolated process.

    ``http_request`` is the async callable behind the sandbox's ``http_request`` helper (none: the
    helper reports that outbound HTTP is not configured). ``allow_insecure`` lets code run without OS
    isolation when the machine has none (``Settings.sandbox_allow_insecure``); otherwise such runs
    raise :class:`SandboxUnavailable`.
    """

    def __init__(
        self,
        limits: SandboxLimits | None = None,
        http_request: HttpRequestHandler | None = None,
        *,
        allow_insecure: bool = False,
        isolation: IsolationInfo | None = None,
        python: str | None = None,
        temp_root: str | None = None,
        max_concurrency: int = 4,
    ) -> None:
        self.limits = limits or SandboxLimits()
        self._http_request = http_request
        self.allow_insecure = allow_insecure
        self.isolation = isolation or detect_isolation()
        self._python = python or sys.executable
        self._temp_root = temp_root
        self._slots = asyncio.Semaphore(max_concurrency)
        self._uids_in_use: set[int] = set()
        self._bootstrap = _package_text("_bootstrap.py")
        self._js_runner = _package_text("_runner.js")

    @classmethod
    def from_settings(cls, settings: Any, **kwargs: Any) -> SandboxRunner:
        """A runner honouring ``settings.sandbox_allow_insecure``."""
        return cls(allow_insecure=bool(getattr(settings, "sandbox_allow_insecure", False)), **kwargs)

    def check_available(self, language: Language = "python") -> None:
        """Raise :class:`SandboxError` when this runner cannot run ``language`` code here."""
        if not self.isolation.available and not self.allow_insecure:
            raise SandboxUnavailable(
                f"Code sandbox refused to run: OS isolation is unavailable ({self.isolation.reason}). "
                "Run Fathom as root on Linux with util-linux 'unshare', or set "
                "FATHOM_SANDBOX_ALLOW_INSECURE=true to run code WITHOUT isolation (unsafe)."
            )
        if language == "javascript" and not self.isolation.node:
            raise SandboxError("JavaScript code cannot run: the 'node' executable is not installed.")

    async def run_python(
        self, code: str, variables: dict[str, Any] | None = None, limits: SandboxLimits | None = None
    ) -> SandboxResult:
        """Run Python ``code`` defining ``main``; user errors come back as ``success=False`` results."""
        return await self._run("python", code, variables or {}, limits or self.limits)

    async def run_javascript(
        self, code: str, variables: dict[str, Any] | None = None, limits: SandboxLimits | None = None
    ) -> SandboxResult:
        """Run JavaScript ``code`` defining ``main`` (sync or async) in Node."""
        return await self._run("javascript", code, variables or {}, limits or self.limits)

    # ---------------------------------------------------------------------------------------------

    def _allocate_uid(self) -> int:
        while True:
            uid = _UID_BASE + secrets.randbelow(_UID_SPAN)
            if uid not in self._uids_in_use:
                self._uids_in_use.add(uid)
                return uid

    def _ro_binds(self, language: Language) -> list[str]:
        """Host dirs outside /usr the runtime needs inside the minimal root (a Node install elsewhere)."""
        if language != "javascript" or not self.isolation.node:
            return []
        prefix = os.path.dirname(os.path.dirname(os.path.realpath(self.isolation.node)))
        return [] if prefix == "/usr" or prefix.startswith("/usr/") else [prefix]

    def _command(self, cfg: dict[str, Any]) -> list[str]:
        inner = [self._python, "-I", "-S", "-c", self._bootstrap, json.dumps(cfg)]
        if self.isolation.available and self.isolation.unshare:
            flags = ["--net", "--pid", "--mount", "--fork", "--kill-child"]
            return [self.isolation.unshare, *flags, "--", *inner]
        return inner

    async def _run(
        self, language: Language, code: str, variables: dict[str, Any], limits: SandboxLimits
    ) -> SandboxResult:
        self.check_available(language)
        async with self._slots:
            base_dir = tempfile.mkdtemp(prefix="fathom-sandbox-", dir=self._temp_root)
            work_dir = os.path.join(base_dir, "work")
            root_dir = os.path.join(base_dir, "root")
            uid = self._allocate_uid() if os.geteuid() == 0 else None
            try:
                os.mkdir(work_dir, 0o700)
                os.mkdir(root_dir, 0o755)
                if uid is not None:
                    os.chown(work_dir, uid, uid)
                isolated = self.isolation.available
                cfg = {
                    "language": language,
                    "work_dir": work_dir,
                    "root_dir": root_dir if isolated else None,
                    "ro_binds": self._ro_binds(language) if isolated else [],
                    "uid": uid,
                    "gid": uid,
                    "cpu_seconds": max(1, int(limits.cpu_seconds)),
                    "memory_bytes": int(limits.memory_mb) * 1024 * 1024,
                    "file_bytes": int(limits.file_bytes),
                    "open_files": int(limits.open_files),
                    "processes": int(limits.processes),
                    "output_bytes": int(limits.output_bytes),
                    "max_requests": int(limits.max_requests),
                    "guards": bool(limits.language_guards),
                    "node": self.isolation.node,
                    "js_runner": self._js_runner if language == "javascript" else "",
                }
                return await self._spawn_and_talk(cfg, code, variables, limits)
            finally:
                if uid is not None:
                    self._uids_in_use.discard(uid)
                shutil.rmtree(base_dir, ignore_errors=True)

    async def _spawn_and_talk(
        self, cfg: dict[str, Any], code: str, variables: dict[str, Any], limits: SandboxLimits
    ) -> SandboxResult:
        started = time.perf_counter()
        job = json.dumps({"code": code, "variables": variables}, ensure_ascii=False, default=str) + "\n"
        stdout_budget = 2 * limits.output_bytes + 65536
        proc = await asyncio.create_subprocess_exec(
            *self._command(cfg),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
            limit=stdout_budget + 1024,
        )
        state = _RunState()
        assert proc.stdout is not None
        stderr_task = asyncio.create_task(self._drain_stderr(proc, state, limits))
        try:
            async with asyncio.timeout(limits.wall_seconds):
                await self._talk(proc, job, state, limits, stdout_budget)
                if state.result is None and state.reason is None:
                    await proc.wait()  # the runner ended without a result: learn how
        except TimeoutError:
            self._breach(
                state, "timeout", f"Execution timed out after {limits.wall_seconds:g}s (wall time limit)"
            )
        finally:
            _kill_tree(proc)
            await _drain(proc.stdout)
            await _settle(stderr_task)
            with contextlib.suppress(ProcessLookupError, TimeoutError):
                await asyncio.wait_for(proc.wait(), timeout=5)
        wall_ms = (time.perf_counter() - started) * 1000
        startup_ms = (state.ready_at - started) * 1000 if state.ready_at else None
        return self._finish(state, proc.returncode, limits, wall_ms, startup_ms)

    async def _talk(
        self,
        proc: asyncio.subprocess.Process,
        job: str,
        state: _RunState,
        limits: SandboxLimits,
        stdout_budget: int,
    ) -> None:
        """Send the job, answer ``http_request`` messages, stop at the result, a breach or EOF."""
        assert proc.stdin and proc.stdout
        try:
            proc.stdin.write(job.encode())
            with contextlib.suppress(ConnectionError):
                await proc.stdin.drain()
            while state.reason is None:
                try:
                    line = await proc.stdout.readline()
                except (ValueError, asyncio.LimitOverrunError):
                    self._breach(state, "output", f"Output limit exceeded ({limits.output_bytes} bytes)")
                    return
                if not line:
                    return
                state.stdout_bytes += len(line)
                if state.stdout_bytes > stdout_budget:
                    self._breach(state, "output", f"Output limit exceeded ({limits.output_bytes} bytes)")
                    return
                try:
                    message = json.loads(line)
                except ValueError:
                    state.extra_log.append(line.decode(errors="replace").rstrip("\n"))
                    continue
                if not isinstance(message, dict):
                    continue
                kind = message.get("type")
                if kind == "ready" and state.ready_at is None:
                    state.ready_at = time.perf_counter()
                elif kind == "http_request":
                    reply = await self._serve_http(message, state, limits)
                    proc.stdin.write((json.dumps(reply, default=str) + "\n").encode())
                    with contextlib.suppress(ConnectionError):
                        await proc.stdin.drain()
                elif kind == "result":
                    state.result = message
                    return
        finally:
            with contextlib.suppress(Exception):
                proc.stdin.close()

    async def _drain_stderr(
        self, proc: asyncio.subprocess.Process, state: _RunState, limits: SandboxLimits
    ) -> None:
        assert proc.stderr
        while True:
            chunk = await proc.stderr.read(65536)
            if not chunk:
                return
            state.stderr_bytes += len(chunk)
            state.stderr_tail = (state.stderr_tail + chunk)[-_STDERR_KEEP:]
            if state.stderr_bytes > limits.output_bytes:
                self._breach(state, "output", f"Output limit exceeded ({limits.output_bytes} bytes)")
                _kill_tree(proc)
                return

    async def _serve_http(
        self, message: dict[str, Any], state: _RunState, limits: SandboxLimits
    ) -> dict[str, Any]:
        request_id = message.get("id")

        def fail(error: str) -> dict[str, Any]:
            return {"type": "http_response", "id": request_id, "ok": False, "error": error}

        state.requests += 1
        if state.requests > limits.max_requests:
            return fail(f"Request limit exceeded: max {limits.max_requests}")
        if self._http_request is None:
            return fail("http_request is not available: no outbound HTTP handler is configured")
        request = message.get("request")
        if not isinstance(request, dict):
            return fail("Invalid http_request")
        try:
            response = await self._http_request(request)
        except Exception as exc:  # noqa: BLE001 - the message goes back to the sandboxed code
            return fail(str(exc) or type(exc).__name__)
        return {"type": "http_response", "id": request_id, "ok": True, "response": response}

    @staticmethod
    def _breach(state: _RunState, reason: Reason, message: str) -> None:
        if state.reason is None:
            state.reason = reason
            state.message = message

    def _finish(
        self,
        state: _RunState,
        returncode: int | None,
        limits: SandboxLimits,
        wall_ms: float,
        startup_ms: float | None,
    ) -> SandboxResult:
        stderr = state.stderr_tail.decode(errors="replace")
        out = SandboxResult(
            False,
            wall_ms=wall_ms,
            startup_ms=startup_ms,
            isolation=self.isolation.mode if self.isolation.available else "insecure",
            stderr_tail=stderr,
        )
        result = state.result
        if state.reason is not None:
            out.reason, out.message = state.reason, state.message
        elif result is not None and result.get("success"):
            data = result.get("data") or {}
            out.success, out.code_return = True, data.get("codeReturn")
            out.log = "\n".join(filter(None, [*state.extra_log, str(data.get("log") or "")]))
        elif result is not None:
            kind = result.get("reason")
            out.reason = "memory" if kind == "memory" else "output" if kind == "output" else "error"
            message = str(result.get("message") or "error")
            out.message = _memory_message(limits) if kind == "memory" else message
        else:
            out.reason, out.message = _explain_exit(returncode, stderr, limits)
        return out


def _memory_message(limits: SandboxLimits) -> str:
    return f"Memory limit exceeded ({limits.memory_mb} MB)"


def _explain_exit(returncode: int | None, stderr: str, limits: SandboxLimits) -> tuple[Reason, str]:
    """Map a run that ended without a result to a reason and a clear message."""
    lowered = stderr.lower()
    if any(s in lowered for s in ("out of memory", "bad_alloc", "memoryerror", "allocation failed")):
        return "memory", _memory_message(limits)
    code = returncode if returncode is not None else -1
    sig = code - _SIGNAL_EXIT if code > _SIGNAL_EXIT else (-code if code < 0 else 0)
    if sig == signal.SIGXCPU or sig == signal.SIGKILL and "signal 9" in stderr:
        return "cpu", f"CPU time limit exceeded ({limits.cpu_seconds}s)"
    if "EAGAIN" in stderr or "Resource temporarily unavailable" in stderr:
        return "processes", f"Process limit exceeded ({limits.processes} processes)"
    if "setup failed" in stderr:
        return "isolation", "Sandbox setup failed: " + stderr.strip().splitlines()[-1]
    last = stderr.strip().splitlines()[-1] if stderr.strip() else ""
    detail = f": {last}" if last else ""
    return "killed", f"Sandbox process exited without a result (exit code {code}){detail}"


def _kill_tree(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL the run's process group (the namespace's init dies with it, taking every process)."""
    if proc.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


async def _drain(stream: asyncio.StreamReader) -> None:
    """Read and discard what is left on a pipe until EOF (the tree is dead, so EOF comes quickly)."""
    with contextlib.suppress(Exception):
        async with asyncio.timeout(5):
            while await stream.read(65536):
                pass


async def _settle(task: asyncio.Task[None]) -> None:
    if not task.done():
        try:
            await asyncio.wait_for(task, timeout=2)
        except (TimeoutError, asyncio.CancelledError):
            task.cancel()
    with contextlib.suppress(BaseException):
        task.result()
