"""One model response as the loop sees it, for every provider: stream events become loop events (plan
and ask calls get only their own events), and the response becomes a :class:`ModelTurn`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fathom.agent.events import (
    AnswerDeltaEvent,
    PlanStatus,
    ReasoningDeltaEvent,
    ToolCallEvent,
    ToolParamsEvent,
)
from fathom.agent.kernel.state import RunState
from fathom.agent.system_tools.plan import SET_PLAN
from fathom.llm import CompletionResult, ReasoningDelta, TextDelta, ToolCallStart, ToolParamsDelta


@dataclass
class ModelTurn:
    """What one request produced (``error`` set when it failed)."""

    content: str = ""
    reasoning: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str = "stop"
    request_id: str = ""
    error: str | None = None

    @property
    def message(self) -> dict[str, Any]:
        """The assistant message to append."""
        message: dict[str, Any] = {
            "role": "assistant",
            "content": self.content or ("" if not self.tool_calls else None),
        }
        if self.reasoning:
            message["reasoning_content"] = self.reasoning
        if self.tool_calls:
            message["tool_calls"] = self.tool_calls
        return message


class StreamHandler:
    """Turns a model's stream events (``fathom.llm``'s deltas) into loop events.

    ``generic`` holds the ids of the calls that get ``tool_call`` / ``tool_params`` events (every
    tool but plan and ask). A provider whose model writes tool calls as text overrides :meth:`text`
    and :meth:`finish`.
    """

    native_tool_calls = True

    def __init__(self, state: RunState) -> None:
        self.state = state
        self.generic: set[str] = set()

    async def discovered(self, call_id: str, name: str) -> None:
        """A tool call began: plan → ``plan_status``; ask → nothing; the rest → ``tool_call``."""
        kind = self.state.catalog.kind(name)
        if kind == "plan":
            await self.state.emit(PlanStatus("generating" if name == SET_PLAN else "updating"))
        elif kind != "ask":
            self.generic.add(call_id)
            call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
            await self.state.emit(ToolCallEvent(call))

    async def text(self, text: str) -> None:
        """A piece of the answer."""
        if text:
            await self.state.emit(AnswerDeltaEvent(text))

    async def handle(self, event: Any) -> None:
        """One stream event."""
        if isinstance(event, TextDelta):
            await self.text(event.text)
        elif isinstance(event, ReasoningDelta):
            await self.state.emit(ReasoningDeltaEvent(event.text))
        elif isinstance(event, ToolCallStart):
            await self.discovered(event.call_id, event.name)
        elif isinstance(event, ToolParamsDelta) and event.call_id in self.generic and event.args_delta:
            await self.state.emit(ToolParamsEvent(event.call_id, event.args_delta))

    async def finish(self, result: CompletionResult) -> ModelTurn:
        """The turn the completed response amounts to."""
        calls = [call.to_openai() for call in result.tool_calls]
        return ModelTurn(result.content, result.reasoning, calls, result.finish_reason, result.request_id)
