"""The one event stream of a run. SSE (detail or plain), the non-stream response and stored chat
items are projections of it. Each event knows its FastGPT SSE name and payload.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar


def text_adapt_gpt_response(
    text: str | None, *, reasoning: str | None = None, model: str = "", finish_reason: str | None = None
) -> dict[str, Any]:
    """An OpenAI chat-completion chunk carrying ``text`` (FastGPT ``textAdaptGptResponse``)."""
    delta: dict[str, Any] = {"role": "assistant", "content": text}
    if reasoning:
        delta["reasoning_content"] = reasoning
    return {
        "id": "",
        "object": "",
        "created": 0,
        "model": model,
        "choices": [{"delta": delta, "index": 0, "finish_reason": finish_reason}],
    }


@dataclass(slots=True)
class WorkflowEvent:
    """Base class: ``event`` is the SSE event name, ``sse_data()`` the JSON payload."""

    event: ClassVar[str] = ""
    depth: int = field(default=1, kw_only=True)

    def sse_data(self) -> Any:
        """The payload FastGPT sends for this event."""
        raise NotImplementedError


@dataclass(slots=True)
class NodeStatusEvent(WorkflowEvent):
    """A node started (``flowNodeStatus``)."""

    event: ClassVar[str] = "flowNodeStatus"
    node_id: str
    name: str
    status: str = "running"

    def sse_data(self) -> Any:
        return {"status": self.status, "name": self.name}


@dataclass(slots=True)
class AnswerEvent(WorkflowEvent):
    """A streamed text or reasoning delta (``answer``)."""

    event: ClassVar[str] = "answer"
    text: str = ""
    reasoning: str | None = None
    node_id: str | None = None

    def sse_data(self) -> Any:
        return text_adapt_gpt_response(self.text, reasoning=self.reasoning)


@dataclass(slots=True)
class FastAnswerEvent(WorkflowEvent):
    """Non-animated text, e.g. the answer node (``fastAnswer``)."""

    event: ClassVar[str] = "fastAnswer"
    text: str = ""
    node_id: str | None = None

    def sse_data(self) -> Any:
        return text_adapt_gpt_response(self.text)


@dataclass(slots=True)
class DatasetIndexingEvent(WorkflowEvent):
    """A knowledge-base search read knowledge bases still indexing, so the answer may miss passages
    (``datasetIndexing``; Fathom's event, detail streams only). ``datasets``: ``{datasetId, name,
    pending, total}`` (collections not yet searchable, of all)."""

    event: ClassVar[str] = "datasetIndexing"
    node_id: str = ""
    datasets: list[dict[str, Any]] = field(default_factory=list)

    def sse_data(self) -> Any:
        return {
            "nodeId": self.node_id,
            "datasets": self.datasets,
            "message": _indexing_message(self.datasets),
        }


def _indexing_message(datasets: list[dict[str, Any]]) -> str:
    """The notice for knowledge bases still indexing, in English (clients may word their own)."""
    parts = [
        f"“{d.get('name', '')}” ({d.get('pending', 0)} of {d.get('total', 0)} documents not searchable yet)"
        for d in datasets
    ]
    noun = "base is" if len(parts) == 1 else "bases are"
    return f"The knowledge {noun} still indexing: {', '.join(parts)}. This answer may miss passages."


@dataclass(slots=True)
class NodeResponseEvent(WorkflowEvent):
    """A node finished; ``response`` is its response data (``flowNodeResponse``)."""

    event: ClassVar[str] = "flowNodeResponse"
    response: dict[str, Any] = field(default_factory=dict)

    def sse_data(self) -> Any:
        return self.response


@dataclass(slots=True)
class UpdateVariablesEvent(WorkflowEvent):
    """Global variables changed (``updateVariables``); system variables already removed."""

    event: ClassVar[str] = "updateVariables"
    variables: dict[str, Any] = field(default_factory=dict)

    def sse_data(self) -> Any:
        return self.variables


@dataclass(slots=True)
class InteractiveEvent(WorkflowEvent):
    """The run paused for the user (``interactive``)."""

    event: ClassVar[str] = "interactive"
    interactive: dict[str, Any] = field(default_factory=dict)

    def sse_data(self) -> Any:
        return {"interactive": self.interactive}


@dataclass(slots=True)
class ToolEvent(WorkflowEvent):
    """Tool lifecycle of Tool Call / Agent nodes; ``kind``: ``toolCall``, ``toolParams``, ``toolResponse``."""

    kind: str = "toolCall"
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The SSE event name."""
        return self.kind

    def sse_data(self) -> Any:
        return self.data


@dataclass(slots=True)
class WorkflowDurationEvent(WorkflowEvent):
    """The root run ended (``workflowDuration``)."""

    event: ClassVar[str] = "workflowDuration"
    duration_seconds: float = 0.0

    def sse_data(self) -> Any:
        return {"durationSeconds": self.duration_seconds}


def event_name(event: WorkflowEvent) -> str:
    """The SSE event name of any workflow event."""
    return event.kind if isinstance(event, ToolEvent) else event.event


EventSink = Callable[[WorkflowEvent], None]
