"""``tool`` (one system / MCP / HTTP tool) and ``toolSet`` (a set of them).

The tools come from ``services.tool_resolver`` (a :class:`ToolResolver`): given the node's
``toolConfig`` and ``pluginId`` it returns :class:`fathom.tools.ToolDefinition` s (one for a
``tool``, all of the set for a ``toolSet``). A ``tool`` node runs its tool with the node's params
through :func:`fathom.tools.run_tool`; a JSON-object response becomes one output per key plus
``system_rawResponse``. A ``toolSet`` wired to a Tool Call / Agent node is expanded into its tools
before the loop starts (see :mod:`graph_tools`); run on its own it only reports its tools.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Protocol

from fathom.tools import ToolDefinition, run_tool
from fathom.workflow.constants import FlowNodeType, NodeOutputKey
from fathom.workflow.dispatch import DispatchResponse, NodeContext, ServiceUnavailableError, register_node
from fathom.workflow.nodes.chat import node_error
from fathom.workflow.nodes.system_tools import is_system_tool_id
from fathom.workflow.runtime import RuntimeNode


class ToolResolver(Protocol):
    """Resolves a tool node's configuration into runnable tool definitions."""

    async def resolve_tools(self, tool_config: Any, plugin_id: str | None) -> Sequence[ToolDefinition]: ...


async def resolve_node_tools(ctx: NodeContext, node: RuntimeNode) -> list[ToolDefinition]:
    """The definitions behind a ``tool`` / ``toolSet`` node (raises when no resolver is injected)."""
    resolver: ToolResolver | None = ctx.services.tool_resolver
    if resolver is None:
        raise ServiceUnavailableError("The tool node needs a tool resolver service (services.tool_resolver)")
    return list(await resolver.resolve_tools(node.source.tool_config, node.plugin_id))


def _parse_response(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


@register_node(FlowNodeType.tool)
async def dispatch_tool(ctx: NodeContext) -> DispatchResponse:
    """Inputs: the tool's parameters → outputs: the response's keys and ``system_rawResponse``."""
    if is_system_tool_id(ctx.node.plugin_id):
        from fathom.workflow.nodes.plugin_module import run_system_tool

        return await run_system_tool(ctx, str(ctx.node.plugin_id))
    try:
        tools = await resolve_node_tools(ctx, ctx.node)
    except LookupError as exc:
        return node_error(str(exc) or "Tool not found")
    if not tools:
        return node_error("Tool not found")
    definition = tools[0]
    params = {k: v for k, v in ctx.params.items() if not k.startswith("system_")}
    call = {
        "id": ctx.node_id,
        "type": "function",
        "function": {"name": definition.name, "arguments": json.dumps(params, ensure_ascii=False)},
    }
    result = await run_tool(call, [], [definition])
    if result.error_message:
        return node_error(result.response or result.error_message)
    value = _parse_response(result.response)
    data: dict[str, Any] = dict(value) if isinstance(value, dict) else {}
    data[NodeOutputKey.rawResponse] = value
    return DispatchResponse(
        data=data,
        response_data={"toolInput": params, "toolRes": value, "totalPoints": 0},
        node_dispatch_usages=[dict(u) for u in result.usages] or None,
        tool_responses=value,
    )


@register_node(FlowNodeType.toolSet)
async def dispatch_tool_set(ctx: NodeContext) -> DispatchResponse:
    """A tool set run directly lists its tools (it is meant to be expanded by a Tool Call node)."""
    tools = await resolve_node_tools(ctx, ctx.node)
    names = [tool.name for tool in tools]
    return DispatchResponse(data={"tools": names}, response_data={"toolSet": names})
