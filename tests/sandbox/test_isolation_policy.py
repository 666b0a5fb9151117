"""Fail closed: without OS isolation the sandbox refuses to run code unless insecure mode is set."""

from __future__ import annotations

import shutil

import pytest
from sandbox_limits import FAST

from fathom.config import Settings
from fathom.sandbox import IsolationInfo, SandboxError, SandboxRunner, SandboxUnavailable, detect_isolation

NONE = IsolationInfo(
    available=False, mode="none", reason="unshare is not installed", unshare=None, node=shutil.which("node")
)


async def test_without_isolation_runs_are_refused_with_the_fix() -> None:
    runner = SandboxRunner(FAST, isolation=NONE)
    with pytest.raises(SandboxUnavailable) as info:
        await runner.run_python("def main():\n    return 1")
    message = str(info.value)
    assert "OS isolation is unavailable (unshare is not installed)" in message
    assert "FATHOM_SANDBOX_ALLOW_INSECURE=true" in message
    with pytest.raises(SandboxUnavailable):
        await runner.run_javascript("function main() { return 1 }")


async def test_settings_default_is_fail_closed() -> None:
    runner = SandboxRunner.from_settings(Settings(), isolation=NONE, limits=FAST)
    with pytest.raises(SandboxUnavailable):
        await runner.run_python("def main():\n    return 1")


async def test_insecure_setting_runs_without_namespaces_and_keeps_the_guards() -> None:
    runner = SandboxRunner.from_settings(Settings(sandbox_allow_insecure=True), isolation=NONE, limits=FAST)
    result = await runner.run_python("def main(a, b):\n    return a + b", {"a": 1, "b": 2})
    assert result.success and result.code_return == 3 and result.isolation == "insecure"
    refused = await runner.run_python("import socket\ndef main():\n    return 1")
    assert refused.message == "Import of module 'socket' is not allowed in the sandbox"


async def test_javascript_needs_node() -> None:
    runner = SandboxRunner(
        FAST, isolation=IsolationInfo(True, "namespaces+uid", "", "/usr/bin/unshare", None)
    )
    with pytest.raises(SandboxError, match="'node' executable is not installed"):
        await runner.run_javascript("function main() { return 1 }")


def test_detection_reports_a_reason_or_a_mode() -> None:
    info = detect_isolation()
    assert (info.available and info.mode == "namespaces+uid" and info.reason == "") or (
        not info.available and info.reason
    )
