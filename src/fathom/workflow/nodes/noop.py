"""Configuration and canvas nodes that do nothing at run time."""

from __future__ import annotations

from fathom.workflow.constants import FlowNodeType
from fathom.workflow.dispatch import DispatchResponse, NodeContext, register_node


@register_node(
    FlowNodeType.systemConfig,
    FlowNodeType.globalVariable,
    FlowNodeType.pluginConfig,
    FlowNodeType.comment,
    FlowNodeType.emptyNode,
    waits=False,
)
async def dispatch_noop(ctx: NodeContext) -> DispatchResponse:
    """No outputs, no response data; outgoing edges become active."""
    return DispatchResponse()
