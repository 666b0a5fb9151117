"""What a run returns (FastGPT ``DispatchFlowResponse`` plus the state Fathom exposes for tests
and resumes: edge states, node outputs, run/skip order, stop and budget flags)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fathom.workflow.runtime import RuntimeEdge


def merge_assistant_text(values: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Join consecutive text values into one; an empty list becomes one empty text value."""
    merged: list[dict[str, Any]] = []
    for item in values:
        if item.get("type") == "text" and merged:
            last = merged[-1]
            last_text = (last.get("text") or {}).get("content")
            if last.get("type") == "text" and last_text:
                last["text"] = {"content": last_text + ((item.get("text") or {}).get("content") or "")}
                continue
        if item.get("type") == "text":
            item = {"type": "text", "text": dict(item.get("text") or {"content": ""})}
        merged.append(item)
    if not merged:
        merged.append({"type": "text", "text": {"content": ""}})
    return merged


#: where a node's response holds the responses of the runs inside it (a child app's, a loop's, a tool call's)
NESTED_RESPONSES = ("pluginDetail", "loopDetail", "toolDetail")


def flat_responses(responses: list[Any]) -> list[dict[str, Any]]:
    """Every node response, those of the runs inside a node after it (FastGPT ``getFlatAppResponses``)."""
    flat: list[dict[str, Any]] = []
    for response in responses:
        if isinstance(response, dict):
            flat.append(response)
            for key in NESTED_RESPONSES:
                if isinstance(inner := response.get(key), list):
                    flat.extend(flat_responses(inner))
    return flat


def cited_quotes(responses: list[Any]) -> list[Any]:
    """FastGPT's ``totalQuoteList``: the quotes of every knowledge-base search, those of the runs inside
    a node too (:func:`flat_responses`). A node whose inner runs are shown counts through them; a child
    app whose runs are hidden from the caller (no ``pluginDetail``) shows the quotes it rolled up into its
    own ``quoteList`` instead."""
    return [
        quote
        for response in flat_responses(responses)
        if isinstance(response.get("quoteList"), list)
        and not any(isinstance(response.get(key), list) for key in NESTED_RESPONSES)
        for quote in response["quoteList"]
        if quote
    ]


@dataclass
class WorkflowRunResult:
    """The outcome of one run."""

    flow_responses: list[dict[str, Any]] = field(default_factory=list)
    flow_usages: list[dict[str, Any]] = field(default_factory=list)
    assistant_responses: list[dict[str, Any]] = field(default_factory=list)
    tool_responses: Any = None
    new_variables: dict[str, Any] = field(default_factory=dict)
    run_times: float = 0
    interactive: dict[str, Any] | None = None
    debug_response: dict[str, Any] | None = None
    duration_seconds: float = 0.0
    system_memories: dict[str, Any] | None = None
    edges: list[RuntimeEdge] = field(default_factory=list)
    node_outputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    histories: list[dict[str, Any]] = field(default_factory=list)
    run_node_ids: list[str] = field(default_factory=list)
    skipped_node_ids: list[str] = field(default_factory=list)
    error: str | None = None
    stopped: bool = False
    budget_exhausted: bool = False
    depth_exceeded: bool = False

    @property
    def answer_text(self) -> str:
        """All text values of the assistant responses, concatenated."""
        return "".join(
            (item.get("text") or {}).get("content") or ""
            for item in self.assistant_responses
            if item.get("type") == "text"
        )

    @property
    def total_points(self) -> float:
        """Sum of ``totalPoints`` over the node usages."""
        return float(sum(usage.get("totalPoints") or 0 for usage in self.flow_usages))
