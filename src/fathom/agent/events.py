"""The agent loop's event union (spec §3.5, SRC ``domain/event.ts``).

Every event is a frozen dataclass with a ``type`` string naming it exactly as FastGPT does.
``call`` fields hold the OpenAI wire form of a tool call (``{id, type, function: {name, arguments}}``).
``to_wire()`` gives the camelCase dict a transport layer forwards.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal

from fathom.agent.usage import AgentLoopUsage


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _wire(value: Any) -> Any:
    if isinstance(value, AgentLoopUsage):
        return value.to_wire()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            _camel(f.name): _wire(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if getattr(value, f.name) is not None
        }
    if isinstance(value, list | tuple):
        return [_wire(item) for item in value]
    if isinstance(value, dict):
        return {key: _wire(item) for key, item in value.items()}
    return value


class _Event:
    def to_wire(self) -> dict[str, Any]:
        """camelCase dict of the event (``None`` fields omitted)."""
        wire = _wire(self)
        assert isinstance(wire, dict)
        return wire


@dataclass(frozen=True, slots=True)
class LLMRequestStart(_Event):
    """A model request is about to be sent."""

    request_index: int
    model_name: str
    type: Literal["llm_request_start"] = "llm_request_start"


@dataclass(frozen=True, slots=True)
class LLMRequestEnd(_Event):
    """A model request finished (or failed: ``error`` set)."""

    request_index: int
    model_name: str
    request_id: str
    finish_reason: str
    seconds: float
    answer_text: str | None = None
    reasoning_text: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    usages: list[AgentLoopUsage] | None = None
    error: str | None = None
    type: Literal["llm_request_end"] = "llm_request_end"


@dataclass(frozen=True, slots=True)
class ReasoningDeltaEvent(_Event):
    """A fragment of streamed reasoning."""

    text: str
    type: Literal["reasoning_delta"] = "reasoning_delta"


@dataclass(frozen=True, slots=True)
class AnswerDeltaEvent(_Event):
    """A fragment of streamed answer text."""

    text: str
    type: Literal["answer_delta"] = "answer_delta"


@dataclass(frozen=True, slots=True)
class ToolCallEvent(_Event):
    """The stream discovered a (generic) tool call."""

    call: dict[str, Any]
    type: Literal["tool_call"] = "tool_call"


@dataclass(frozen=True, slots=True)
class ToolParamsEvent(_Event):
    """An incremental fragment of a tool call's arguments."""

    call_id: str
    args_delta: str
    type: Literal["tool_params"] = "tool_params"


@dataclass(frozen=True, slots=True)
class ToolRunStart(_Event):
    """A generic tool is about to run."""

    call: dict[str, Any]
    type: Literal["tool_run_start"] = "tool_run_start"


@dataclass(frozen=True, slots=True)
class ToolResponseCompress:
    """What tool-response compression did: the compressed text, its usage, request ids, seconds."""

    response: str
    usage: AgentLoopUsage | None
    request_ids: list[str]
    seconds: float


@dataclass(frozen=True, slots=True)
class ToolRunEnd(_Event):
    """A generic tool finished; ``response`` is the final model-facing text."""

    call: dict[str, Any]
    raw_response: str
    response: str
    seconds: float
    assistant_messages: list[dict[str, Any]] | None = None
    error_message: str | None = None
    usages: list[AgentLoopUsage] | None = None
    tool_response_compress: ToolResponseCompress | None = None
    metadata: dict[str, Any] | None = None
    type: Literal["tool_run_end"] = "tool_run_end"


@dataclass(frozen=True, slots=True)
class AfterMessageCompress(_Event):
    """History checkpoint compression ran."""

    request_ids: list[str]
    seconds: float
    usages: list[AgentLoopUsage] | None = None
    context_checkpoint: str | None = None
    type: Literal["after_message_compress"] = "after_message_compress"


@dataclass(frozen=True, slots=True)
class PlanStatus(_Event):
    """A plan tool call was discovered: ``generating`` (set_plan) or ``updating`` (update_plan)."""

    status: Literal["generating", "updating"]
    type: Literal["plan_status"] = "plan_status"


@dataclass(frozen=True, slots=True)
class PlanOperation(_Event):
    """A plan tool ran; ``plan`` is present iff ``success``."""

    operation: Literal["set_plan", "add_steps", "update_steps"]
    message: str
    success: bool
    id: str | None = None
    params: Any = None
    seconds: float | None = None
    plan: dict[str, Any] | None = None
    error: str | None = None
    type: Literal["plan_operation"] = "plan_operation"


@dataclass(frozen=True, slots=True)
class AskStart(_Event):
    """A valid ``ask_user`` call: the questions to show."""

    ask: dict[str, Any]
    id: str | None = None
    params: Any = None
    seconds: float | None = None
    type: Literal["ask_start"] = "ask_start"


@dataclass(frozen=True, slots=True)
class AskEvent(_Event):
    """The loop paused on an ask; carries the provider state to persist."""

    ask: dict[str, Any]
    provider_state: dict[str, Any] | None = None
    type: Literal["ask"] = "ask"


@dataclass(frozen=True, slots=True)
class AskResume(_Event):
    """The loop resumed with the user's answer."""

    answer: str
    type: Literal["ask_resume"] = "ask_resume"


@dataclass(frozen=True, slots=True)
class StopGateEvent(_Event):
    """The stop gate rejected finishing (hidden feedback); emitted only by providers that gate."""

    feedback: str
    rejections: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
    type: Literal["stop_gate"] = "stop_gate"


AgentLoopEvent = (
    LLMRequestStart
    | LLMRequestEnd
    | ReasoningDeltaEvent
    | AnswerDeltaEvent
    | ToolCallEvent
    | ToolParamsEvent
    | ToolRunStart
    | ToolRunEnd
    | AfterMessageCompress
    | PlanStatus
    | PlanOperation
    | AskStart
    | AskEvent
    | AskResume
    | StopGateEvent
)

EVENT_TYPES: tuple[str, ...] = (
    "llm_request_start",
    "llm_request_end",
    "reasoning_delta",
    "answer_delta",
    "tool_call",
    "tool_params",
    "tool_run_start",
    "tool_run_end",
    "after_message_compress",
    "plan_status",
    "plan_operation",
    "ask_start",
    "ask",
    "ask_resume",
    "stop_gate",
)
