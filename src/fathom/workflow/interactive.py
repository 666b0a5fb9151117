"""Interactive pause records (FastGPT ``WorkflowInteractiveResponseType``) and resume helpers.

A record is a plain JSON object so it can be stored in a chat item and sent to API clients:
``{type, params, entryNodeIds, memoryEdges, nodeOutputs, skipNodeQueue, usageId, recordVersion}``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from fathom.workflow.values import js_truthy

#: Version of the record layout Fathom writes; readers accept records without it (FastGPT's).
INTERACTIVE_RECORD_VERSION = 1

#: Interactive types that wrap a child run's record in ``params.childrenResponse``.
CHILD_INTERACTIVE_TYPES = frozenset(
    {"childrenInteractive", "toolChildrenInteractive", "loopInteractive", "loopRunInteractive"}
)


class InteractiveRecord(BaseModel):
    """Validated view of an interactive record (the dict form is what travels)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    type: str
    params: dict[str, Any] = Field(default_factory=dict)
    entry_node_ids: list[str] = Field(default_factory=list, alias="entryNodeIds")
    memory_edges: list[dict[str, Any]] = Field(default_factory=list, alias="memoryEdges")
    node_outputs: list[dict[str, Any]] = Field(default_factory=list, alias="nodeOutputs")
    skip_node_queue: list[dict[str, Any]] | None = Field(default=None, alias="skipNodeQueue")
    usage_id: str | None = Field(default=None, alias="usageId")
    record_version: int | None = Field(default=None, alias="recordVersion")


def parse_interactive(value: dict[str, Any] | InteractiveRecord) -> dict[str, Any]:
    """Validate a stored record and return its dict form (raises pydantic ``ValidationError``)."""
    record = value if isinstance(value, InteractiveRecord) else InteractiveRecord.model_validate(value)
    return record.model_dump(by_alias=True, exclude_none=True)


def is_pending_interactive(interactive: dict[str, Any] | None) -> bool:
    """Whether a record still waits for the user (FastGPT ``getLastInteractiveValue`` rules)."""
    if not interactive:
        return False
    kind = interactive.get("type")
    params = interactive.get("params") or {}
    if kind in CHILD_INTERACTIVE_TYPES:
        return True
    if kind == "userSelect":
        return not js_truthy(params.get("userSelectedVal"))
    if kind == "userInput":
        return not js_truthy(params.get("submitted"))
    if kind == "paymentPause":
        return not js_truthy(params.get("continue"))
    if kind == "agentAsk":
        return not js_truthy(params.get("answered"))
    return False


def get_last_interactive_value(histories: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The pending interactive of the last AI message's last value, if any."""
    for item in reversed(histories):
        if item.get("obj") != "AI":
            continue
        values = item.get("value") or []
        if not values:
            return None
        last = values[-1]
        if not isinstance(last, dict) or last.get("type") != "interactive":
            return None
        interactive = last.get("interactive")
        return interactive if is_pending_interactive(interactive) else None
    return None


def mark_interactive_answered(interactive: dict[str, Any], answer: Any) -> dict[str, Any]:
    """A copy of a stored record marked as answered (what the chat layer writes back on resume):
    ``userSelectedVal`` for a select, ``submitted`` + ``inputForm`` values for a form; child records
    are marked at the innermost level."""
    record = dict(interactive)
    params = dict(record.get("params") or {})
    child = params.get("childrenResponse")
    if record.get("type") in CHILD_INTERACTIVE_TYPES and isinstance(child, dict):
        params["childrenResponse"] = mark_interactive_answered(child, answer)
    elif record.get("type") == "userSelect":
        params["userSelectedVal"] = answer
    elif record.get("type") == "userInput":
        values = answer if isinstance(answer, dict) else {}
        params["inputForm"] = [
            {**item, "value": values.get(item.get("key"), item.get("value"))}
            if isinstance(item, dict)
            else item
            for item in params.get("inputForm") or []
        ]
        params["submitted"] = True
    elif record.get("type") == "paymentPause":
        params["continue"] = True
    elif record.get("type") == "agentAsk":
        params["answered"] = True
        params["userAnswer"] = answer
    record["params"] = params
    return record


def build_interactive_record(
    response: dict[str, Any],
    *,
    entry_ids: list[str],
    memory_edges: list[dict[str, Any]],
    nodes: Iterable[Any],
    skip_node_queue: list[dict[str, Any]],
    usage_id: str | None,
) -> dict[str, Any]:
    """The stored record of a pause: the node's ``{type, params}`` plus what a resume needs
    (entry nodes, edge states, every truthy node output, the skip queue, the usage id)."""
    return {
        **response,
        "skipNodeQueue": skip_node_queue,
        "entryNodeIds": entry_ids,
        "memoryEdges": memory_edges,
        "nodeOutputs": [
            {"nodeId": node.node_id, "key": output.key, "value": output.value}
            for node in nodes
            for output in node.outputs
            if js_truthy(output.value)
        ],
        "usageId": usage_id,
        "recordVersion": INTERACTIVE_RECORD_VERSION,
    }
