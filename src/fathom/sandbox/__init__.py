"""fathom.sandbox: run untrusted Python/JavaScript in an isolated, resource-limited process (spec §6.8).

This package sits beside ``fathom.security`` and never imports it: the parent process injects the
egress-guarded HTTP callable behind the sandbox's ``http_request`` helper.
"""

from fathom.sandbox.http import client_factory_request_handler
from fathom.sandbox.isolation import IsolationInfo, detect_isolation
from fathom.sandbox.runner import SandboxRunner
from fathom.sandbox.types import (
    HttpRequestHandler,
    SandboxError,
    SandboxLimits,
    SandboxResult,
    SandboxUnavailable,
)

__all__ = [
    "HttpRequestHandler",
    "IsolationInfo",
    "SandboxError",
    "SandboxLimits",
    "SandboxResult",
    "SandboxRunner",
    "SandboxUnavailable",
    "client_factory_request_handler",
    "detect_isolation",
]
