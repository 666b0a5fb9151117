"""Run untrusted Python or JavaScript in an isolated, resource-limited child process.

Each run gets a fresh process tree in new network, PID and mount namespaces (no network at all, no
view of other processes, a minimal read-only root), a private temporary work dir, a dedicated
unprivileged uid, rlimits on CPU, memory, processes, file size and open files, and parent-side
wall-time and output limits. On any breach the whole tree is killed. The sandboxed code reaches the
outside only through ``http_request``: a JSON line to this parent, which calls the injected
:data:`HttpRequestHandler` (the egress guard).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import secrets
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from importlib import resources
from types import TracebackType
from typing import Any

from fathom.sandbox.isolation import IsolationInfo, detect_isolation
from fathom.sandbox.pool import WarmPool
from fathom.sandbox.process import (
    RunState,
    SpawnedProcess,
    build_result,
    drain,
    drain_stderr,
    kill_tree,
    output_message,
    settle,
)
from fathom.sandbox.types import (
    HttpRequestHandler,
    Language,
    SandboxError,
    SandboxLimits,
    SandboxResult,
    SandboxUnavailable,
)

_UID_BASE = 1_500_000
_UID_SPAN = 1_000_000
_UIDS_IN_USE: set[int] = set()
_READY_TIMEOUT = 15.0


@functools.lru_cache(maxsize=8)
def _stdlib_dir(python: str) -> str:
    """The standard-library directory of the interpreter that runs the sandbox."""
    if python == sys.executable:
        return os.path.realpath(sysconfig.get_paths()["stdlib"])
    out = subprocess.run(
        [python, "-I", "-S", "-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return os.path.realpath(out.stdout.strip())


def _package_text(name: str) -> str:
    return resources.files("fathom.sandbox").joinpath(name).read_text(encoding="utf-8")


class SandboxRunner:
    """Runs code per FastGPT's contract ``main(variables) -> {codeReturn, log}`` in an isolated process.

    ``http_request`` is the async callable behind the sandbox's ``http_request`` helper (none: the
    helper reports that outbound HTTP is not configured). ``allow_insecure`` lets code run without OS
    isolation when the machine has none (``Settings.sandbox_allow_insecure``); otherwise such runs
    raise :class:`SandboxUnavailable`. ``warm`` keeps that many pre-started one-shot processes per
    language for the default limits (call :meth:`warm_up` to fill it, :meth:`aclose` to end it).
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
        warm: int = 0,
    ) -> None:
        self.limits = limits or SandboxLimits()
        self._http_request = http_request
        self.allow_insecure = allow_insecure
        self.isolation = isolation or detect_isolation()
        self._python = python or sys.executable
        self._temp_root = temp_root
        self._slots = asyncio.Semaphore(max_concurrency)
        self._pool = WarmPool(warm, self._spawn_ready, self._dispose)
        self._bootstrap = _package_text("_bootstrap.py")
        self._js_runner = _package_text("_runner.js")
        self._py_runner = _package_text("_pyrunner.py")
        self._py_guards = _package_text("_pyguards.py")

    @classmethod
    def from_settings(cls, settings: Any, **kwargs: Any) -> SandboxRunner:
        """A runner honouring ``settings.sandbox_allow_insecure``."""
        return cls(allow_insecure=bool(getattr(settings, "sandbox_allow_insecure", False)), **kwargs)

    async def warm_up(self, *languages: Language) -> None:
        """Fill the warm pool for ``languages`` (default Python) and wait until the processes are ready."""
        for language in languages or ("python",):
            self.check_available(language)
            await self._pool.fill(language)

    async def aclose(self) -> None:
        """Kill the idle warm processes and stop refilling."""
        await self._pool.aclose()

    async def __aenter__(self) -> SandboxRunner:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

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

    @staticmethod
    def _allocate_uid() -> int:
        while True:
            uid = _UID_BASE + secrets.randbelow(_UID_SPAN)
            if uid not in _UIDS_IN_USE:
                _UIDS_IN_USE.add(uid)
                return uid

    def _ro_binds(self, language: Language) -> list[str]:
        """Host dirs outside /usr the runtime needs inside the minimal root, read-only.

        JavaScript: a Node install outside /usr. Python: the interpreter's standard library, so
        lazy imports work and nothing has to be pre-imported (its site-packages stays hidden).
        """
        if language == "javascript":
            if not self.isolation.node:
                return []
            path = os.path.dirname(os.path.dirname(os.path.realpath(self.isolation.node)))
        else:
            path = _stdlib_dir(self._python)
        return [] if path == "/usr" or path.startswith("/usr/") else [path]

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
            spawned = self._pool.take(language) if limits == self.limits else None
            warm = spawned is not None
            if spawned is None:
                spawned = await self._spawn(language, limits)
            return await self._execute(spawned, code, variables, warm=warm)

    async def _spawn(self, language: Language, limits: SandboxLimits) -> SpawnedProcess:
        """Create the run's dirs and start its process (setup happens inside, before user code)."""
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
                "hide_dirs": [os.path.join(_stdlib_dir(self._python), "site-packages")] if isolated else [],
                "stdlib_visible": isolated,
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
                "py_runner": self._py_runner if language == "python" else "",
                "py_guards": self._py_guards if language == "python" else "",
            }
            started = time.perf_counter()
            proc = await asyncio.create_subprocess_exec(
                *self._command(cfg),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
                env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
                limit=2 * limits.output_bytes + 66560,
            )
        except BaseException:
            if uid is not None:
                _UIDS_IN_USE.discard(uid)
            shutil.rmtree(base_dir, ignore_errors=True)
            raise
        state = RunState()
        stderr_task = asyncio.create_task(drain_stderr(proc, state, limits))
        return SpawnedProcess(proc, language, limits, base_dir, uid, started, state, stderr_task)

    async def _spawn_ready(self, language: Language) -> SpawnedProcess | None:
        """A process for the default limits that has reported ``ready`` (for the warm pool)."""
        spawned = await self._spawn(language, self.limits)
        assert spawned.proc.stdout is not None
        try:
            async with asyncio.timeout(_READY_TIMEOUT):
                line = await spawned.proc.stdout.readline()
            if json.loads(line or b"null") == {"type": "ready"}:
                spawned.state.ready_at = time.perf_counter()
                return spawned
        except (TimeoutError, ValueError):
            pass
        await self._dispose(spawned)
        return None

    async def _dispose(self, spawned: SpawnedProcess) -> None:
        """Kill the process tree, collect it, and remove its dirs and uid."""
        proc = spawned.proc
        kill_tree(proc)
        await drain(proc.stdout)
        await settle(spawned.stderr_task)
        with contextlib.suppress(ProcessLookupError, TimeoutError):
            await asyncio.wait_for(proc.wait(), timeout=5)
        if spawned.uid is not None:
            _UIDS_IN_USE.discard(spawned.uid)
        shutil.rmtree(spawned.base_dir, ignore_errors=True)

    async def _execute(
        self, spawned: SpawnedProcess, code: str, variables: dict[str, Any], *, warm: bool
    ) -> SandboxResult:
        """Send the job, serve the run until its result or a breach, then destroy the process."""
        limits, state, proc = spawned.limits, spawned.state, spawned.proc
        started = time.perf_counter() if warm else spawned.started
        job = json.dumps({"code": code, "variables": variables}, ensure_ascii=False, default=str) + "\n"
        try:
            async with asyncio.timeout(limits.wall_seconds):
                await self._talk(proc, job, state, limits, 2 * limits.output_bytes + 65536)
                if state.result is None and state.reason is None:
                    await proc.wait()  # the runner ended without a result: learn how
        except TimeoutError:
            state.breach("timeout", f"Execution timed out after {limits.wall_seconds:g}s (wall time limit)")
        finally:
            await self._dispose(spawned)
        ready_at = state.ready_at
        return build_result(
            state,
            proc.returncode,
            limits,
            wall_ms=(time.perf_counter() - started) * 1000,
            startup_ms=0.0 if warm else ((ready_at - spawned.started) * 1000 if ready_at else None),
            isolation=self.isolation.mode if self.isolation.available else "insecure",
            warm=warm,
        )

    async def _talk(
        self,
        proc: asyncio.subprocess.Process,
        job: str,
        state: RunState,
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
                    state.breach("output", output_message(limits))
                    return
                if not line:
                    return
                state.stdout_bytes += len(line)
                if state.stdout_bytes > stdout_budget:
                    state.breach("output", output_message(limits))
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

    async def _serve_http(
        self, message: dict[str, Any], state: RunState, limits: SandboxLimits
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
