"""Public vocabulary of the code sandbox: limits, results, errors, the injected HTTP handler."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

HttpRequestHandler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
"""Async callable the parent uses for the sandbox's ``http_request`` helper.

It receives ``{url, method, headers, body, timeout}`` and returns ``{status, headers, data}``; raising
an exception sends its message back to the sandboxed code as the request error. The server passes one
that goes through the egress guard; the sandbox never imports it.
"""

Language = Literal["python", "javascript"]
Reason = Literal["ok", "error", "timeout", "cpu", "memory", "output", "processes", "killed", "isolation"]


@dataclass(frozen=True)
class SandboxLimits:
    """Resource limits of one run. Small values keep tests fast; defaults suit the ``code`` node."""

    wall_seconds: float = 10.0
    cpu_seconds: int = 10
    memory_mb: int = 256
    output_bytes: int = 1024 * 1024
    file_bytes: int = 10 * 1024 * 1024
    processes: int = 16
    open_files: int = 64
    max_requests: int = 30
    language_guards: bool = True
    """Python import allow-list, restricted ``open``, audit hook. Turn off only to test the OS layer."""


@dataclass
class SandboxResult:
    """Outcome of one run, in FastGPT's shape via :meth:`to_wire`."""

    success: bool
    code_return: Any = None
    log: str = ""
    message: str = ""
    reason: Reason = "ok"
    wall_ms: float = 0.0
    startup_ms: float | None = None
    """Milliseconds from spawn to the runner's first message (cold-start cost), when measured."""
    isolation: str = ""
    warm: bool = False
    """Whether a pre-started process from the warm pool ran the code (no cold start)."""
    stderr_tail: str = field(default="", repr=False)

    def to_wire(self) -> dict[str, Any]:
        """``{success:true, data:{codeReturn, log}}`` or ``{success:false, message}`` (spec §6.8)."""
        if self.success:
            return {"success": True, "data": {"codeReturn": self.code_return, "log": self.log}}
        return {"success": False, "message": self.message}


class SandboxError(Exception):
    """Base class of sandbox errors raised to the caller (not user-code errors, which are results)."""


class SandboxUnavailable(SandboxError):
    """OS isolation is unavailable and insecure execution is not allowed (fail closed)."""
