"""``formInput``: pauses the run with a form; on resume exposes each submitted field as an output."""

from __future__ import annotations

import json
from typing import Any

from fathom.workflow.constants import FlowNodeType, NodeInputKey, NodeOutputKey
from fathom.workflow.dispatch import DispatchResponse, NodeContext, register_node


@register_node(FlowNodeType.formInput, waits=False)
async def dispatch_form_input(ctx: NodeContext) -> DispatchResponse:
    """First visit: interactive ``userInput{description, inputForm}``. Resume: the query text is
    parsed as JSON (raw text when it is not JSON); each field becomes an output plus
    ``formInputResult``; the form round is dropped from later prompts' history."""
    last = ctx.last_interactive
    if not (ctx.node.is_entry and last and last.get("type") == "userInput"):
        return DispatchResponse(
            interactive={
                "type": "userInput",
                "params": {
                    "description": ctx.params.get(NodeInputKey.description) or "",
                    "inputForm": ctx.params.get(NodeInputKey.userInputForms) or [],
                },
            }
        )
    ctx.node.is_entry = False
    text = ctx.query_text
    try:
        submitted: Any = json.loads(text)
    except ValueError:
        submitted = text
    fields = submitted if isinstance(submitted, dict) else {}
    return DispatchResponse(
        data={**fields, NodeOutputKey.formInputResult: submitted},
        rewrite_histories=ctx.histories[:-2],
        tool_responses=submitted,
        response_data={"formInputResult": submitted},
    )
