"""MCP tools against real MCP servers from the ``mcp`` SDK: stdio (a subprocess) and streamable HTTP."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fathom.security.egress import EgressGuard, EgressPolicy
from fathom.tools import ToolInputValidationError, run_tool
from fathom.tools.sources.mcp import McpServer, McpToolError, McpToolSet

SERVER_SCRIPT = Path(__file__).with_name("mcp_test_server.py")
sys.path.insert(0, str(SERVER_SCRIPT.parent))
from mcp_test_server import SEARCH_SCHEMA  # noqa: E402


def model_visible(schema: dict[str, Any]) -> dict[str, Any]:
    """The server's schema as the model sees it: whole, less the ``default`` annotations that the
    tool-input runtime strips (FastGPT ``stripModelSchemaAnnotations``)."""
    visible = copy.deepcopy(schema)
    for prop in visible["properties"].values():
        prop.pop("default", None)
    return visible


LOOPBACK = EgressGuard(EgressPolicy(allow_cidrs=["127.0.0.1/32"]))


def call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"id": "c", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def stdio_server() -> McpServer:
    return McpServer(command=sys.executable, args=[str(SERVER_SCRIPT), "stdio"])


def start_http_server() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, str(SERVER_SCRIPT), "http"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("PORT "), line
    return proc, f"http://127.0.0.1:{int(line.split()[1])}/mcp"


def stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    proc, url = start_http_server()
    yield url
    stop(proc)


async def test_stdio_tools_keep_the_full_schema_and_survive_a_dying_server() -> None:
    async with McpToolSet(stdio_server(), timeout=20) as toolset:
        infos = await toolset.load_tools()
        assert [t.name for t in infos] == ["search_docs", "echo", "fail", "die"]
        definitions = toolset.tool_definitions()
        # FastGPT #4992: the model sees the schema exactly as the server declared it
        assert definitions[0].schema["function"] == {
            "name": "search_docs",
            "description": "Search the documentation",
            "parameters": model_visible(SEARCH_SCHEMA),
        }

        args = {
            "query": "rrf",
            "limit": None,
            "period": {"from": "2024-01-01"},
            "filters": [{"field": "a", "values": ["x"]}],
        }
        result = await run_tool(call("search_docs", args), [], definitions)
        assert json.loads(result.response) == {"tool": "search_docs", "arguments": args}
        assert result.metadata["structuredContent"] == {"tool": "search_docs", "arguments": args}

        # nested $ref / additionalProperties violations are caught before the server is called
        bad = await run_tool(call("search_docs", {"query": "rrf", "period": {"to": "x"}}), [], definitions)
        assert bad.response.startswith("Tool input validation failed: ")
        assert "/period" in bad.response

        failed = await run_tool(call("fail", {}), [], definitions)
        assert failed.response == "Tool error: quota exceeded"

        died = await run_tool(call("die", {}), [], definitions)
        assert died.response.startswith("Tool error: MCP server ")
        assert died.error_message == died.response

        # the next call reconnects (a new server process)
        again = await run_tool(call("echo", {"text": "after"}), [], definitions)
        assert json.loads(again.response) == {"tool": "echo", "arguments": {"text": "after"}}


async def test_streamable_http_tools_per_call_connections(http_url: str) -> None:
    toolset = McpToolSet(McpServer(url=http_url), guard=LOOPBACK, name_prefix="docs_", timeout=20)
    await toolset.load_tools()
    definitions = toolset.tool_definitions(["echo", "search_docs"])
    assert [d.name for d in definitions] == ["docs_echo", "docs_search_docs"]
    assert definitions[1].parameters == model_visible(SEARCH_SCHEMA)
    result = await run_tool(call("docs_echo", {"text": "你好"}), [], definitions)
    assert json.loads(result.response) == {"tool": "echo", "arguments": {"text": "你好"}}
    with pytest.raises(ToolInputValidationError):
        await toolset.call_tool("search_docs", {"query": "x", "unknown": 1})


async def test_streamable_http_persistent_connection(http_url: str) -> None:
    async with McpToolSet(McpServer(url=http_url), guard=LOOPBACK) as toolset:
        await toolset.load_tools()
        first = await toolset.call_tool("echo", {"text": "one"})
        second = await toolset.call_tool("echo", {"text": "two"})
    assert json.loads(first.response)["arguments"] == {"text": "one"}
    assert json.loads(second.response)["arguments"] == {"text": "two"}


async def test_http_server_dying_mid_call_is_a_model_visible_error() -> None:
    proc, url = start_http_server()
    try:
        async with McpToolSet(McpServer(url=url), guard=LOOPBACK, timeout=20) as toolset:
            await toolset.load_tools()
            result = await run_tool(call("die", {}), [], toolset.tool_definitions())
    finally:
        stop(proc)
    assert result.response.startswith("Tool error: ")


async def test_egress_guard_refuses_loopback_mcp_urls_by_default(http_url: str) -> None:
    toolset = McpToolSet(McpServer(url=http_url))
    with pytest.raises(McpToolError, match="127.0.0.1/32"):
        await toolset.load_tools()


async def test_unreachable_server_is_a_clear_error() -> None:
    toolset = McpToolSet(McpServer(command=sys.executable, args=["-c", "import sys; sys.exit(2)"]), timeout=5)
    with pytest.raises(McpToolError, match="MCP server"):
        await toolset.load_tools()


def test_server_config_needs_exactly_one_transport() -> None:
    with pytest.raises(ValueError, match="exactly one of url="):
        McpServer()
    with pytest.raises(ValueError):
        McpServer(url="http://x", command="y")


async def test_fixed_inputs_leave_the_model_schema_and_win_over_model_arguments() -> None:
    async with McpToolSet(stdio_server(), timeout=20) as toolset:
        await toolset.load_tools()
        definitions = toolset.tool_definitions(["search_docs"], config={"search_docs": {"mode": "deep"}})
        parameters = definitions[0].parameters
        assert parameters is not None and "mode" not in parameters["properties"]
        args = {"query": "rrf", "mode": "fast", "injected": True}
        result = await run_tool(call("search_docs", args), [], definitions)
        assert json.loads(result.response)["arguments"] == {"mode": "deep", "query": "rrf"}
