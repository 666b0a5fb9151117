"""Parent-side plumbing of one sandbox process: state, killing, draining, mapping exits to results."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from dataclasses import dataclass, field
from typing import Any

from fathom.sandbox.types import Language, Reason, SandboxLimits, SandboxResult

STDERR_KEEP = 4096
SIGNAL_EXIT = 128


@dataclass
class RunState:
    """Mutable bookkeeping of one run."""

    result: dict[str, Any] | None = None
    reason: Reason | None = None
    message: str = ""
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    stderr_tail: bytes = b""
    requests: int = 0
    ready_at: float | None = None
    extra_log: list[str] = field(default_factory=list)

    def breach(self, reason: Reason, message: str) -> None:
        """Record the first limit breach (later ones do not overwrite it)."""
        if self.reason is None:
            self.reason = reason
            self.message = message


@dataclass
class SpawnedProcess:
    """A started sandbox process with its private dirs and run uid."""

    proc: asyncio.subprocess.Process
    language: Language
    limits: SandboxLimits
    base_dir: str
    uid: int | None
    started: float
    state: RunState
    stderr_task: asyncio.Task[None]


def output_message(limits: SandboxLimits) -> str:
    return f"Output limit exceeded ({limits.output_bytes} bytes)"


def _memory_message(limits: SandboxLimits) -> str:
    return f"Memory limit exceeded ({limits.memory_mb} MB)"


async def drain_stderr(proc: asyncio.subprocess.Process, state: RunState, limits: SandboxLimits) -> None:
    """Keep the tail of stderr; kill the tree when it grows past the output limit."""
    assert proc.stderr
    while True:
        chunk = await proc.stderr.read(65536)
        if not chunk:
            return
        state.stderr_bytes += len(chunk)
        state.stderr_tail = (state.stderr_tail + chunk)[-STDERR_KEEP:]
        if state.stderr_bytes > limits.output_bytes:
            state.breach("output", output_message(limits))
            kill_tree(proc)
            return


def kill_tree(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL the run's process group (the namespace's init dies with it, taking every process)."""
    if proc.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


async def drain(stream: asyncio.StreamReader | None) -> None:
    """Read and discard what is left on a pipe until EOF (the tree is dead, so EOF comes quickly)."""
    if stream is None:
        return
    with contextlib.suppress(Exception):
        async with asyncio.timeout(5):
            while await stream.read(65536):
                pass


async def settle(task: asyncio.Task[None]) -> None:
    """Wait briefly for a helper task, then cancel it; never raise."""
    if not task.done():
        try:
            await asyncio.wait_for(task, timeout=2)
        except (TimeoutError, asyncio.CancelledError):
            task.cancel()
    with contextlib.suppress(BaseException):
        task.result()


def _explain_exit(returncode: int | None, stderr: str, limits: SandboxLimits) -> tuple[Reason, str]:
    """Map a run that ended without a result to a reason and a clear message."""
    lowered = stderr.lower()
    if any(s in lowered for s in ("out of memory", "bad_alloc", "memoryerror", "allocation failed")):
        return "memory", _memory_message(limits)
    code = returncode if returncode is not None else -1
    sig = code - SIGNAL_EXIT if code > SIGNAL_EXIT else (-code if code < 0 else 0)
    if sig == signal.SIGXCPU or (sig == signal.SIGKILL and "signal 9" in stderr):
        return "cpu", f"CPU time limit exceeded ({limits.cpu_seconds}s)"
    if "EAGAIN" in stderr or "Resource temporarily unavailable" in stderr:
        return "processes", f"Process limit exceeded ({limits.processes} processes)"
    if "setup failed" in stderr:
        return "isolation", "Sandbox setup failed: " + stderr.strip().splitlines()[-1]
    last = stderr.strip().splitlines()[-1] if stderr.strip() else ""
    detail = f": {last}" if last else ""
    return "killed", f"Sandbox process exited without a result (exit code {code}){detail}"


def build_result(
    state: RunState,
    returncode: int | None,
    limits: SandboxLimits,
    *,
    wall_ms: float,
    startup_ms: float | None,
    isolation: str,
    warm: bool,
) -> SandboxResult:
    """The :class:`SandboxResult` of a finished run."""
    stderr = state.stderr_tail.decode(errors="replace")
    out = SandboxResult(
        False, wall_ms=wall_ms, startup_ms=startup_ms, isolation=isolation, warm=warm, stderr_tail=stderr
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
