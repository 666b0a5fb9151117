"""``pluginInput`` / ``pluginOutput``: the entry and exit of a workflow tool (plugin)."""

from __future__ import annotations

from fathom.workflow.constants import FlowNodeType, NodeOutputKey
from fathom.workflow.dispatch import DispatchResponse, NodeContext, register_node
from fathom.workflow.nodes.start import file_urls
from fathom.workflow.variables import chat_value_to_text


@register_node(FlowNodeType.pluginInput, waits=False)
async def dispatch_plugin_input(ctx: NodeContext) -> DispatchResponse:
    """Outputs every input (already formatted by value type) plus the query files."""
    _, files = chat_value_to_text(ctx.query)
    return DispatchResponse(data={**ctx.params, NodeOutputKey.userFiles: file_urls(files)}, response_data={})


@register_node(FlowNodeType.pluginOutput, waits=False)
async def dispatch_plugin_output(ctx: NodeContext) -> DispatchResponse:
    """Collects its inputs as the plugin's result (``pluginOutput`` in the node response)."""
    return DispatchResponse(
        data=dict(ctx.params), response_data={"totalPoints": 0, "pluginOutput": dict(ctx.params)}
    )
