"""``textEditor``: renders a text template from dynamic inputs and global variables."""

from __future__ import annotations

import json
from typing import Any

from fathom.workflow.constants import FlowNodeType, NodeInputKey, NodeOutputKey
from fathom.workflow.dispatch import DispatchResponse, NodeContext, register_node
from fathom.workflow.values import js_string
from fathom.workflow.variables import replace_variable


def _as_text(value: Any) -> Any:
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, indent=2)
    if isinstance(value, (bool, int, float)):
        return js_string(value)
    return value


@register_node(FlowNodeType.textEditor, waits=False)
async def dispatch_text_editor(ctx: NodeContext) -> DispatchResponse:
    """Output ``system_text``: the template with ``{{key}}`` from dynamic inputs, then variables."""
    text = ctx.params.get(NodeInputKey.textareaInput) or ""
    custom = ctx.params.get(NodeInputKey.addInputParam) or {}
    values = {key: _as_text(value) for key, value in custom.items()} if isinstance(custom, dict) else {}
    result = replace_variable(text, {**values, **ctx.variables})
    result = result if isinstance(result, str) else js_string(result)
    return DispatchResponse(data={NodeOutputKey.text: result}, response_data={"textOutput": result})
