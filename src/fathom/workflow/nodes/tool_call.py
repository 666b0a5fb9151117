"""``tools`` (the Tool Call node) with ``stopTool`` and ``toolParams``.

The Tool Call node is the agent loop with the fixed ``fastAgent`` provider, raw prompt mode and
plan/ask disabled; its tools are the nodes wired by ``selectedTools`` edges (:mod:`graph_tools`).
``stopTool`` ends the calling loop when a tool's branch reaches it; ``toolParams`` declares a tool
branch's custom parameters and outputs them.
"""

from __future__ import annotations

from fathom.agent import SystemToolsConfig
from fathom.workflow.constants import FlowNodeType
from fathom.workflow.dispatch import DispatchResponse, NodeContext, register_node
from fathom.workflow.nodes.agent_runner import run_agent_node


@register_node(FlowNodeType.toolCall)
async def dispatch_tool_call(ctx: NodeContext) -> DispatchResponse:
    """Inputs ``model``, ``systemPrompt``, ``history``, ``userChatInput``, ``temperature``,
    ``maxToken`` (+ ``selectedTools`` edges) → output ``answerText``."""
    return await run_agent_node(
        ctx, label="tool call", system_tools=SystemToolsConfig(plan=False, ask=False), prompt_mode="raw"
    )


@register_node(FlowNodeType.stopTool, waits=False)
async def dispatch_stop_tool(ctx: NodeContext) -> DispatchResponse:
    """Marks the tool run as stopping (the Tool Call node sees it ran and ends its loop)."""
    return DispatchResponse(response_data={"toolStop": True})


@register_node(FlowNodeType.toolParams, waits=False)
async def dispatch_tool_params(ctx: NodeContext) -> DispatchResponse:
    """Each declared parameter (an input filled from the tool call) becomes an output."""
    values = {item.key: ctx.params.get(item.key) for item in ctx.node.inputs}
    return DispatchResponse(data=values, response_data={"toolParamsResult": values}, tool_responses=values)
