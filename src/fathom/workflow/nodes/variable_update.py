"""``variableUpdate``: assigns global variables or node outputs and emits ``updateVariables``."""

from __future__ import annotations

from typing import Any

from fathom.workflow.constants import VARIABLE_NODE_ID, FlowNodeType, NodeInputKey
from fathom.workflow.dispatch import DispatchResponse, NodeContext, register_node
from fathom.workflow.events import UpdateVariablesEvent
from fathom.workflow.values import js_truthy, value_type_format
from fathom.workflow.variables import (
    get_reference_variable_value,
    is_reference,
    remove_system_variable,
    replace_editor_variable,
)


def _new_value(ctx: NodeContext, item: dict[str, Any]) -> Any:
    value = item.get("value")
    # ["", literal] (or renderType "input") is a typed literal; [nodeId, key] is a reference.
    literal = item.get("renderType") == "input" or not (
        isinstance(value, list) and value and js_truthy(value[0])
    )
    if literal:
        raw = (
            value[1]
            if isinstance(value, list) and len(value) > 1
            else (None if isinstance(value, list) else value)
        )
        formatted = value_type_format(raw, item.get("valueType"))
        if isinstance(formatted, str):
            return replace_editor_variable(formatted, ctx.nodes, ctx.variables)
        return formatted
    return get_reference_variable_value(value, ctx.nodes, ctx.variables)


@register_node(FlowNodeType.variableUpdate, waits=False)
async def dispatch_update_variable(ctx: NodeContext) -> DispatchResponse:
    """Apply each ``updateList`` item; invalid targets are reported as ``null`` in the result list."""
    results: list[Any] = []
    for item in ctx.params.get(NodeInputKey.updateList) or []:
        target = item.get("variable")
        if (
            not is_reference(target)
            or not target[1]
            or (target[0] != VARIABLE_NODE_ID and target[0] not in ctx.nodes)
        ):
            results.append(None)
            continue
        value = _new_value(ctx, item)
        node_id, key = target[0], target[1]
        if node_id == VARIABLE_NODE_ID:
            ctx.variables[key] = value
        else:
            output = ctx.nodes[node_id].outputs_by_id.get(key)
            if output is not None:
                output.value = value
        results.append(value)
    visible = remove_system_variable(ctx.variables, ctx.run.external_variable_keys)
    ctx.emit(UpdateVariablesEvent(variables=visible))
    return DispatchResponse(new_variables=dict(ctx.variables), response_data={"updateVarResult": results})
