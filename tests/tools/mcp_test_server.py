"""A small MCP server for the tool tests, built on the official ``mcp`` SDK's low-level ``Server``.

Run ``python mcp_test_server.py stdio`` (stdio transport) or ``python mcp_test_server.py http``
(streamable HTTP on 127.0.0.1, a free port printed as ``PORT <n>`` on stdout).

Tools: ``search_docs`` (a rich JSON Schema: $defs/$ref, anyOf, enums, nested arrays of objects),
``echo`` (returns its arguments as text and structured content), ``fail`` (an ``isError`` result)
and ``die`` (the server process exits in the middle of the call).
"""

from __future__ import annotations

import json
import os
import socket
import sys
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server

SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "$defs": {
        "range": {
            "type": "object",
            "properties": {"from": {"type": "string", "format": "date"}, "to": {"type": "string"}},
            "required": ["from"],
            "additionalProperties": False,
        }
    },
    "properties": {
        "query": {"type": "string", "minLength": 2, "description": "What to look for"},
        "mode": {"type": "string", "enum": ["fast", "deep"], "default": "fast"},
        "limit": {"anyOf": [{"type": "integer", "minimum": 1, "maximum": 50}, {"type": "null"}]},
        "filters": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "field": {"type": "string"},
                    "values": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["field", "values"],
            },
        },
        "period": {"$ref": "#/$defs/range"},
    },
    "required": ["query"],
    "additionalProperties": False,
}


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(
        tools=[
            types.Tool(
                name="search_docs", description="Search the documentation", input_schema=SEARCH_SCHEMA
            ),
            types.Tool(
                name="echo",
                description="Echo the arguments",
                input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
            ),
            types.Tool(name="fail", description="Always fails", input_schema={"type": "object"}),
            types.Tool(name="die", description="Kills the server", input_schema={"type": "object"}),
        ]
    )


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    args = params.arguments or {}
    if params.name == "die":
        sys.stdout.flush()
        os._exit(3)
    if params.name == "fail":
        return types.CallToolResult(content=[types.TextContent(text="quota exceeded")], is_error=True)
    text = json.dumps({"tool": params.name, "arguments": args}, sort_keys=True)
    return types.CallToolResult(
        content=[types.TextContent(text=text)],
        structured_content={"tool": params.name, "arguments": args},
    )


server = Server("fathom-test", on_list_tools=list_tools, on_call_tool=call_tool)


async def run_stdio() -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def run_http() -> None:
    import anyio
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)  # accept connections (queued) before uvicorn starts serving, so no client races it
    app = server.streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    anyio.run(uvicorn.Server(config).serve, [sock])


if __name__ == "__main__":
    if sys.argv[1:] == ["http"]:
        run_http()
    else:
        import anyio

        anyio.run(run_stdio)
