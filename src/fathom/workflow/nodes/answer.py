"""``answerNode``: sends fixed or templated text to the user."""

from __future__ import annotations

import json

from fathom.workflow.constants import FlowNodeType, NodeInputKey, NodeOutputKey
from fathom.workflow.dispatch import DispatchResponse, NodeContext, register_node
from fathom.workflow.events import FastAnswerEvent


@register_node(FlowNodeType.answerNode)
async def dispatch_answer(ctx: NodeContext) -> DispatchResponse:
    """Streams ``"\\n" + text`` as ``fastAnswer`` and records it as answer text."""
    text = ctx.params.get(NodeInputKey.answerText)
    if text is None:
        text = ""
    formatted = text if isinstance(text, str) else json.dumps(text, ensure_ascii=False, indent=2)
    response_text = f"\n{formatted}"
    ctx.emit(FastAnswerEvent(text=response_text, node_id=ctx.node_id))
    return DispatchResponse(
        data={NodeOutputKey.answerText: response_text},
        answer_text=response_text,
        response_data={"textOutput": formatted},
        tool_responses=response_text,
    )
