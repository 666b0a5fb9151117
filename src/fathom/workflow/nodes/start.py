"""``workflowStart``: exposes the user's question and files."""

from __future__ import annotations

from fathom.workflow.constants import FlowNodeType, NodeInputKey, NodeOutputKey
from fathom.workflow.dispatch import DispatchResponse, NodeContext, register_node
from fathom.workflow.variables import chat_value_to_text


def file_urls(files: list[dict[str, object]]) -> list[str]:
    """URLs of query files (files without a URL are dropped)."""
    return [str(item["url"]) for item in files if item.get("url")]


@register_node(FlowNodeType.workflowStart, waits=False)
async def dispatch_workflow_start(ctx: NodeContext) -> DispatchResponse:
    """Outputs ``userChatInput`` (query text, else the input's own value) and ``userFiles``."""
    text, files = chat_value_to_text(ctx.query)
    return DispatchResponse(
        data={
            NodeOutputKey.userChatInput: text or ctx.params.get(NodeInputKey.userChatInput) or "",
            NodeOutputKey.userFiles: file_urls(files),
        },
        response_data={},
    )
