"""``customFeedback``: attaches feedback text to the chat item (not to the model context)."""

from __future__ import annotations

from fathom.workflow.constants import FlowNodeType, NodeInputKey
from fathom.workflow.dispatch import DispatchResponse, NodeContext, register_node
from fathom.workflow.events import FastAnswerEvent


@register_node(FlowNodeType.customFeedback, waits=False)
async def dispatch_custom_feedback(ctx: NodeContext) -> DispatchResponse:
    """Records ``customFeedbacks`` in the node response (the chat layer stores them on the item);
    without a chat id (debug) the text is shown as a ``fastAnswer`` instead."""
    text = ctx.params.get(NodeInputKey.textareaInput) or ""
    info = ctx.run.run_info
    if ctx.run.stream and not (info.get("chatId") and info.get("responseChatItemId")):
        ctx.emit(FastAnswerEvent(text=f'\n\n**自定义反馈成功: (仅调试模式下展示该内容)**: "{text}"\n\n'))
    return DispatchResponse(response_data={"textOutput": text, "customFeedbacks": [text]})
