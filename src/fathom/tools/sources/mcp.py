"""MCP tools through the official ``mcp`` SDK (streamable HTTP and stdio transports).

Each MCP tool keeps its FULL input JSON Schema as the model-facing ``parameters`` ($defs/$ref, anyOf,
enums, nested objects: FastGPT #4992 broke calls by flattening them). Arguments are asserted against
that schema before every call. A server that fails or dies mid-call gives a model-visible
``Tool error: ...``; the next call reconnects.

``McpToolSet`` works in two ways:

- ``async with McpToolSet(server) as tools:`` keeps one connection open (a stdio server process
  is started once); calls from any task share it.
- without ``async with``, every call opens and closes its own connection (FastGPT's behaviour).
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

from fathom.tools.contract import ToolContext, ToolDefinition, ToolResult
from fathom.tools.http_client import EgressGuardLike, check_tool_url
from fathom.tools.schema import assert_tool_runtime_params
from fathom.tools.sources.http_tools import model_tool_name
from fathom.tools.sources.runtime_tool import compile_json_schema_tool, runtime_tool_definition

__all__ = ["McpServer", "McpToolError", "McpToolInfo", "McpToolSet"]


class McpToolError(RuntimeError):
    """The MCP server reported an error for a call (``isError``) or the connection failed."""


class _ToolReportedError(McpToolError):
    """The tool ran and answered ``isError: true`` (the connection is fine)."""


@dataclass
class McpServer:
    """Where the MCP server is: a streamable-HTTP ``url`` (with optional ``headers``) or a stdio
    ``command`` + ``args`` (+ ``env``, ``cwd``)."""

    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    command: str | None = None
    args: list[str] = field(default_factory=list)
    env: dict[str, str] | None = None
    cwd: str | None = None

    def __post_init__(self) -> None:
        if (self.url is None) == (self.command is None):
            raise ValueError("McpServer needs exactly one of url= (streamable HTTP) or command= (stdio)")

    @property
    def label(self) -> str:
        return self.url or " ".join([self.command or "", *self.args]).strip()


@dataclass
class McpToolInfo:
    """One tool as the server lists it: name, description and the untouched input schema."""

    name: str
    description: str
    input_schema: dict[str, Any]


def _leaf_error(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups, as raised by the SDK's task groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _describe_error(exc: BaseException) -> str:
    leaf = _leaf_error(exc)
    text = str(leaf).strip()
    return f"{type(leaf).__name__}: {text}" if text else type(leaf).__name__


def _block_text(block: Any) -> str:
    text = getattr(block, "text", None)
    if isinstance(text, str):
        return text
    dump = block.model_dump(mode="json", by_alias=True, exclude_none=True)
    return json.dumps(dump, ensure_ascii=False)


def _mcp_result_to_tool_result(result: Any) -> ToolResult:
    """A ``CallToolResult`` → :class:`ToolResult`; raises :class:`McpToolError` when ``isError``."""
    content = list(getattr(result, "content", None) or [])
    structured = getattr(result, "structured_content", None)
    if content:
        text = "\n".join(_block_text(block) for block in content)
    elif structured is not None:
        text = json.dumps(structured, ensure_ascii=False)
    else:
        text = ""
    if getattr(result, "is_error", False):
        raise _ToolReportedError(text or "MCP tool reported an error")
    metadata: dict[str, Any] = {}
    if structured is not None:
        metadata["structuredContent"] = structured
    return ToolResult(response=text, metadata=metadata)


class _Connection:
    """One MCP client session owned by a background task (the SDK's context must be entered and
    exited in the same task); any task may send requests through it."""

    def __init__(self, server: McpServer, read_timeout: float | None) -> None:
        self.server = server
        self.read_timeout = read_timeout
        self.client: Any = None
        self._ready = asyncio.Event()
        self._closing = asyncio.Event()
        self._error: BaseException | None = None
        self._task: asyncio.Task[None] | None = None

    async def _target(self, stack: AsyncExitStack) -> Any:
        from mcp import StdioServerParameters

        if self.server.command is not None:
            return StdioServerParameters(
                command=self.server.command,
                args=list(self.server.args),
                env=self.server.env,
                cwd=self.server.cwd,
            )
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        http = await stack.enter_async_context(create_mcp_http_client(headers=dict(self.server.headers)))
        assert self.server.url is not None
        return streamable_http_client(self.server.url, http_client=http)

    async def _own(self) -> None:
        from mcp import Client

        try:
            async with AsyncExitStack() as stack:
                target = await self._target(stack)
                client = await stack.enter_async_context(
                    Client(target, read_timeout_seconds=self.read_timeout)
                )
                self.client = client
                self._ready.set()
                await self._closing.wait()
        except BaseException as exc:  # the server died, refused, or we were cancelled
            self._error = exc
        finally:
            self.client = None
            self._ready.set()

    async def open(self) -> Any:
        if self._task is None:
            self._task = asyncio.create_task(self._own(), name=f"mcp:{self.server.label}")
        await self._ready.wait()
        if self.client is None:
            error = self._error
            detail = _describe_error(error) if error is not None else "closed"
            raise McpToolError(f"Cannot connect to MCP server {self.server.label}: {detail}")
        return self.client

    @property
    def alive(self) -> bool:
        return self._task is not None and not self._task.done()

    async def close(self) -> None:
        self._closing.set()
        if self._task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._task), timeout=10)
            except (TimeoutError, asyncio.CancelledError):
                self._task.cancel()


class McpToolSet:
    """The tools of one MCP server as :class:`ToolDefinition` objects."""

    def __init__(
        self,
        server: McpServer,
        *,
        name_prefix: str = "",
        timeout: float | None = 60.0,
        guard: EgressGuardLike | None = None,
        check_url: bool = True,
    ) -> None:
        self.server = server
        self.name_prefix = name_prefix
        self.timeout = timeout
        self.guard = guard
        self.check_url = check_url
        self.tools: list[McpToolInfo] = []
        self._connection: _Connection | None = None
        self._persistent = False
        self._lock = asyncio.Lock()

    async def __aenter__(self) -> McpToolSet:
        self._persistent = True
        await self._shared_client()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._persistent = False
        if self._connection is not None:
            await self._connection.close()
            self._connection = None

    async def _check(self) -> None:
        if self.server.url is not None and self.check_url:
            await check_tool_url(self.server.url, self.guard)

    async def _shared_client(self) -> Any:
        async with self._lock:
            if self._connection is None or not self._connection.alive:
                if self._connection is not None:
                    await self._connection.close()
                await self._check()
                self._connection = _Connection(self.server, self.timeout)
            return await self._connection.open()

    async def _with_client(self, action: Any) -> Any:
        if self._persistent:
            return await action(await self._shared_client())
        await self._check()
        connection = _Connection(self.server, self.timeout)
        try:
            return await action(await connection.open())
        finally:
            await connection.close()

    async def load_tools(self) -> list[McpToolInfo]:
        """List the server's tools (every page), keeping each input schema exactly as listed."""

        async def action(client: Any) -> list[McpToolInfo]:
            tools: list[McpToolInfo] = []
            cursor: str | None = None
            for _ in range(100):
                page = await client.list_tools(cursor=cursor)
                for tool in page.tools:
                    schema = tool.input_schema
                    tools.append(
                        McpToolInfo(
                            name=tool.name,
                            description=tool.description or "",
                            input_schema=copy.deepcopy(dict(schema)) if schema else {"type": "object"},
                        )
                    )
                cursor = page.next_cursor
                if not cursor:
                    break
            return tools

        self.tools = await self._wrap_errors(action)
        return self.tools

    async def _wrap_errors(self, action: Any) -> Any:
        try:
            return await self._with_client(action)
        except _ToolReportedError:
            raise
        except Exception as exc:
            if self._persistent:
                await self._reset()
            if isinstance(exc, McpToolError):
                raise
            leaf = _leaf_error(exc)
            text = str(leaf).strip() or type(leaf).__name__
            raise McpToolError(f"MCP server {self.server.label} failed: {text}") from exc

    async def _reset(self) -> None:
        """Drop a broken shared connection; the next call reconnects."""
        async with self._lock:
            if self._connection is not None:
                await self._connection.close()
                self._connection = None

    def info(self, name: str) -> McpToolInfo:
        for tool in self.tools:
            if tool.name == name:
                return tool
        raise KeyError(f"MCP tool not found: {name}")

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> ToolResult:
        """Assert the arguments against the tool's schema, call it, return its result."""
        params = dict(arguments or {})
        if self.tools:
            assert_tool_runtime_params(self.info(name).input_schema, params)

        async def action(client: Any) -> ToolResult:
            result = await client.call_tool(name, params, read_timeout_seconds=self.timeout)
            return _mcp_result_to_tool_result(result)

        return await self._wrap_errors(action)

    def _definition(self, info: McpToolInfo, config: Mapping[str, Any] | None) -> ToolDefinition:
        async def execute(ctx: ToolContext) -> ToolResult:
            return await self.call_tool(info.name, ctx.params or {})

        name = model_tool_name(info.name, self.name_prefix)
        compiled = compile_json_schema_tool(name, info.description, info.input_schema, "mcp", config)
        return runtime_tool_definition(
            compiled,
            execute,
            info.input_schema,
            kind="mcp",
            metadata={"mcpTool": info.name, "server": self.server.label},
        )

    def tool_definitions(
        self,
        names: Sequence[str] | None = None,
        config: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> list[ToolDefinition]:
        """Definitions of the loaded tools (call :meth:`load_tools` first), optionally only ``names``.
        ``config`` fixes inputs per MCP tool name (``{tool: {key: value}}``): those keys leave the
        model schema and are always sent with the builder's value (the tool-input runtime)."""
        chosen = self.tools if names is None else [self.info(name) for name in names]
        return [self._definition(info, (config or {}).get(info.name)) for info in chosen]
