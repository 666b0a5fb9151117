"""``ifElseNode``: evaluates condition groups in order and keeps only the first matching branch
(``IF``, ``ELSE IF n`` or ``ELSE``); every other branch handle is skipped."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from fathom.workflow.constants import FlowNodeType, NodeInputKey, NodeOutputKey, else_if_label, get_handle_id
from fathom.workflow.dispatch import DispatchResponse, NodeContext, register_node
from fathom.workflow.values import js_coerce_string, js_number
from fathom.workflow.variables import get_reference_variable_value


def _is_empty(value: Any) -> bool:
    """``None``, blank string, NaN, empty list or empty object."""
    if value is None:
        return True
    if isinstance(value, str):
        return value.strip() == ""
    if isinstance(value, float) and math.isnan(value):
        return True
    if isinstance(value, (list, tuple, dict)):
        return len(value) == 0
    return False


def _is_include(value: Any, target: Any) -> bool:
    """Array membership by string form, or substring for strings."""
    if isinstance(value, list):
        return target in [js_coerce_string(item) for item in value]
    if isinstance(value, str):
        return js_coerce_string(target) in value
    return False


def _length(value: Any) -> int | None:
    return len(value) if isinstance(value, (str, list)) else None


def _compare(left: Any, right: Any, op: Callable[[float, float], bool]) -> bool:
    a, b = js_number(left), js_number(right)
    if (isinstance(a, float) and math.isnan(a)) or (isinstance(b, float) and math.isnan(b)):
        return False
    return op(a, b)


def _length_compare(value: Any, target: Any, op: Callable[[float, float], bool]) -> bool:
    length = _length(value)
    return length is not None and _compare(length, target, op)


def _regex(value: Any, pattern: Any) -> bool:
    if not isinstance(value, str) or not isinstance(pattern, str) or not pattern:
        return False
    if pattern.startswith("/"):
        pattern = pattern[1:]
    if pattern.endswith("/"):
        pattern = pattern[:-1]
    return re.search(pattern, value.strip()) is not None


def _starts(value: Any, target: Any) -> bool:
    return isinstance(value, str) and value.strip().startswith(js_coerce_string(target))


def _ends(value: Any, target: Any) -> bool:
    return isinstance(value, str) and value.strip().endswith(js_coerce_string(target))


CONDITIONS: dict[str, Callable[[Any, Any], bool]] = {
    "isEmpty": lambda v, t: _is_empty(v),
    "isNotEmpty": lambda v, t: not _is_empty(v),
    "equalTo": lambda v, t: js_coerce_string(v).strip() == js_coerce_string(t).strip(),
    "notEqual": lambda v, t: js_coerce_string(v).strip() != js_coerce_string(t).strip(),
    "greaterThan": lambda v, t: _compare(v, t, lambda a, b: a > b),
    "lessThan": lambda v, t: _compare(v, t, lambda a, b: a < b),
    "greaterThanOrEqualTo": lambda v, t: _compare(v, t, lambda a, b: a >= b),
    "lessThanOrEqualTo": lambda v, t: _compare(v, t, lambda a, b: a <= b),
    "include": _is_include,
    "notInclude": lambda v, t: not _is_include(v, t),
    "startWith": _starts,
    "endWith": _ends,
    "reg": _regex,
    "lengthEqualTo": lambda v, t: _length_compare(v, t, lambda a, b: a == b),
    "lengthNotEqualTo": lambda v, t: not _length_compare(v, t, lambda a, b: a == b),
    "lengthGreaterThan": lambda v, t: _length_compare(v, t, lambda a, b: a > b),
    "lengthGreaterThanOrEqualTo": lambda v, t: _length_compare(v, t, lambda a, b: a >= b),
    "lengthLessThan": lambda v, t: _length_compare(v, t, lambda a, b: a < b),
    "lengthLessThanOrEqualTo": lambda v, t: _length_compare(v, t, lambda a, b: a <= b),
}


def _check_condition(condition: str, left: Any, right: Any) -> bool:
    """Apply one operator (unknown operators are false)."""
    operation = CONDITIONS.get(condition)
    return bool(operation(left, right)) if operation is not None else False


def _evaluate_group(ctx: NodeContext, group: dict[str, Any]) -> bool:
    """One ``IF``/``ELSE IF`` group: its conditions joined by ``AND`` (default) or ``OR``."""
    results: list[bool] = []
    for item in group.get("list") or []:
        condition = item.get("condition")
        if not condition:
            results.append(False)
            continue
        left = get_reference_variable_value(item.get("variable"), ctx.nodes, ctx.variables)
        right = item.get("value")
        if item.get("valueType") == "reference":
            right = get_reference_variable_value(right, ctx.nodes, ctx.variables)
        results.append(_check_condition(condition, left, right))
    return any(results) if group.get("condition") == "OR" else all(results)


@register_node(FlowNodeType.ifElseNode, waits=False)
async def dispatch_if_else(ctx: NodeContext) -> DispatchResponse:
    """Output ``ifElseResult`` (the branch label); skips all other branch handles."""
    groups = ctx.params.get(NodeInputKey.ifElseList) or []
    result = "ELSE"
    for index, group in enumerate(groups):
        if _evaluate_group(ctx, group):
            result = else_if_label(index)
            break
    labels = [else_if_label(i) for i in range(len(groups))] + ["ELSE"]
    chosen = get_handle_id(ctx.node_id, "source", result)
    return DispatchResponse(
        data={NodeOutputKey.ifElseResult: result},
        response_data={"totalPoints": 0, "ifElseResult": result},
        skip_handle_ids=[
            h for h in (get_handle_id(ctx.node_id, "source", label) for label in labels) if h != chosen
        ],
    )
