"""``userSelect``: pauses the run with options; on resume keeps only the chosen option's branch."""

from __future__ import annotations

from typing import Any

from fathom.workflow.constants import FlowNodeType, NodeInputKey, NodeOutputKey, get_handle_id
from fathom.workflow.dispatch import DispatchResponse, NodeContext, register_node
from fathom.workflow.events import FastAnswerEvent
from fathom.workflow.variables import chat_value_to_text


def _resuming(ctx: NodeContext, kind: str) -> bool:
    last = ctx.last_interactive
    return bool(ctx.node.is_entry and last and last.get("type") == kind)


@register_node(FlowNodeType.userSelect, waits=False)
async def dispatch_user_select(ctx: NodeContext) -> DispatchResponse:
    """First visit: interactive ``userSelect{description, userSelectOptions}``. Resume: the query
    text is the selected option value; all other option handles are skipped."""
    description = ctx.params.get(NodeInputKey.description) or ""
    options: list[dict[str, Any]] = ctx.params.get(NodeInputKey.userSelectOptions) or []
    if not _resuming(ctx, "userSelect"):
        if description:
            ctx.emit(FastAnswerEvent(text=f"\n{description}", node_id=ctx.node_id))
        return DispatchResponse(
            interactive={
                "type": "userSelect",
                "params": {"description": description, "userSelectOptions": options},
            }
        )
    ctx.node.is_entry = False
    values = ctx.query if isinstance(ctx.query, list) else []
    has_text = isinstance(ctx.query, str) or any(isinstance(v, dict) and v.get("text") for v in values)
    if not has_text:
        return DispatchResponse(
            skip_handle_ids=[get_handle_id(ctx.node_id, "source", o.get("key", "")) for o in options]
        )
    selected = chat_value_to_text(ctx.query)[0]
    return DispatchResponse(
        data={NodeOutputKey.selectResult: selected},
        rewrite_histories=ctx.histories[:-2],
        skip_handle_ids=[
            get_handle_id(ctx.node_id, "source", option.get("key", ""))
            for option in options
            if option.get("value") != selected
        ],
        response_data={"userSelectResult": selected},
        tool_responses=selected,
    )
