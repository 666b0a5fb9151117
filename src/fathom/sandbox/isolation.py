"""Detect which OS isolation this machine offers for the sandbox, once per process.

Full isolation ("namespaces+uid") needs: ``unshare`` able to create new network and PID namespaces and
this process running as root so the worker can drop to a dedicated unprivileged uid. Anything less is
reported as unavailable with the reason, and the runner refuses to run code (fail closed) unless
``Settings.sandbox_allow_insecure`` is true.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from dataclasses import dataclass


@dataclass(frozen=True)
class IsolationInfo:
    """What the sandbox can use here."""

    available: bool
    mode: str
    """``namespaces+uid`` when available, else ``none``."""
    reason: str
    """Why isolation is unavailable (empty when available)."""
    unshare: str | None
    node: str | None


def _probe_unshare(unshare: str) -> str:
    """Empty string when ``unshare --net --pid --mount --fork --kill-child`` works, else the reason."""
    try:
        proc = subprocess.run(
            [unshare, "--net", "--pid", "--mount", "--fork", "--kill-child", "--", "true"],
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unshare could not run: {exc}"
    if proc.returncode != 0:
        detail = proc.stderr.decode(errors="replace").strip().splitlines()
        return f"unshare --net --pid --mount failed: {detail[-1] if detail else proc.returncode}"
    return ""


@functools.lru_cache(maxsize=1)
def detect_isolation() -> IsolationInfo:
    """Probe the machine (cached): namespaces via ``unshare`` and the ability to drop privileges."""
    node = shutil.which("node")
    unshare = shutil.which("unshare")
    if os.name != "posix" or not hasattr(os, "fork"):
        return IsolationInfo(False, "none", "not a POSIX system", unshare, node)
    if unshare is None:
        return IsolationInfo(False, "none", "the 'unshare' command (util-linux) is not installed", None, node)
    if os.geteuid() != 0:
        return IsolationInfo(
            False,
            "none",
            "the server is not running as root, so the sandbox cannot create namespaces "
            "and drop to an unprivileged uid",
            unshare,
            node,
        )
    problem = _probe_unshare(unshare)
    if problem:
        return IsolationInfo(False, "none", problem, unshare, node)
    return IsolationInfo(True, "namespaces+uid", "", unshare, node)
