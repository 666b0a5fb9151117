"""Turn OpenAI ``chat.completion.chunk`` objects into typed stream events and an assembled result."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from fathom.llm.events import (
    CompletionResult,
    FinishEvent,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallStart,
    ToolParamsDelta,
    Usage,
    UsageEvent,
)


def new_call_id() -> str:
    """A tool call id for endpoints that do not send one."""
    return f"call_{uuid.uuid4().hex[:24]}"


def _get(obj: Any, name: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


@dataclass
class _PendingCall:
    index: int
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    announced: bool = False


def usage_from(raw: Any) -> Usage | None:
    """A :class:`Usage` from an OpenAI ``usage`` object or dict, or None when absent/empty."""
    if raw is None:
        return None
    prompt = _get(raw, "prompt_tokens")
    completion = _get(raw, "completion_tokens")
    if prompt is None and completion is None:
        return None
    return Usage(input_tokens=int(prompt or 0), output_tokens=int(completion or 0))


class StreamAssembler:
    """Feed chunks one by one; collect the events to yield and the pieces of the final message."""

    def __init__(self) -> None:
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, _PendingCall] = {}
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.response_id: str | None = None
        self.model: str | None = None

    def _call_for(self, delta_call: Any) -> _PendingCall:
        index = _get(delta_call, "index")
        call_id = _get(delta_call, "id") or ""
        if index is None:
            # Some servers omit the index: a new id starts a new call, otherwise continue the last one.
            last = self.calls[max(self.calls)] if self.calls else None
            if last is not None and (not call_id or call_id == last.id):
                return last
            index = len(self.calls)
        index = int(index)
        pending = self.calls.get(index)
        if pending is None:
            pending = self.calls[index] = _PendingCall(index=index)
        return pending

    def _announce(self, pending: _PendingCall, events: list[StreamEvent]) -> None:
        if not pending.id:
            pending.id = new_call_id()
        pending.announced = True
        events.append(ToolCallStart(call_id=pending.id, name=pending.name, index=pending.index))
        buffered = "".join(pending.arguments)
        if buffered:
            events.append(ToolParamsDelta(call_id=pending.id, args_delta=buffered))

    def feed(self, chunk: Any) -> list[StreamEvent]:
        """Absorb one chunk and return the events it produced (possibly none)."""
        events: list[StreamEvent] = []
        self.response_id = self.response_id or _get(chunk, "id")
        self.model = self.model or _get(chunk, "model")
        usage = usage_from(_get(chunk, "usage"))
        if usage is not None:
            self.usage = usage
        for choice in _get(chunk, "choices") or ():
            if (_get(choice, "index") or 0) != 0:
                continue
            delta = _get(choice, "delta")
            reasoning = _get(delta, "reasoning_content") or _get(delta, "reasoning")
            if isinstance(reasoning, str) and reasoning:
                self.reasoning.append(reasoning)
                events.append(ReasoningDelta(reasoning))
            text = _get(delta, "content")
            if isinstance(text, str) and text:
                self.content.append(text)
                events.append(TextDelta(text))
            for delta_call in _get(delta, "tool_calls") or ():
                self._feed_call(delta_call, events)
            reason = _get(choice, "finish_reason")
            if reason:
                self.finish_reason = str(reason)
        return events

    def _feed_call(self, delta_call: Any, events: list[StreamEvent]) -> None:
        pending = self._call_for(delta_call)
        call_id = _get(delta_call, "id")
        if call_id and not pending.id:
            pending.id = str(call_id)
        function = _get(delta_call, "function")
        name = _get(function, "name")
        if name and not pending.announced:
            pending.name += str(name)
        fragment = _get(function, "arguments")
        if fragment:
            pending.arguments.append(str(fragment))
            if pending.announced:
                events.append(ToolParamsDelta(call_id=pending.id, args_delta=str(fragment)))
        if not pending.announced and pending.name:
            self._announce(pending, events)

    def flush(self) -> list[StreamEvent]:
        """Announce calls whose name never arrived (so every call is seen once)."""
        events: list[StreamEvent] = []
        for index in sorted(self.calls):
            if not self.calls[index].announced:
                self._announce(self.calls[index], events)
        return events

    def tool_calls(self) -> tuple[ToolCall, ...]:
        """The assembled calls in index order."""
        return tuple(
            ToolCall(id=call.id, name=call.name, arguments="".join(call.arguments))
            for _, call in sorted(self.calls.items())
        )

    def finish(
        self, *, request_id: str | None, model: str, count_usage: Callable[[CompletionResult], Usage]
    ) -> list[StreamEvent]:
        """The closing events: pending call announcements, usage, and the finish event."""
        events = self.flush()
        calls = self.tool_calls()
        result = CompletionResult(
            content="".join(self.content),
            reasoning="".join(self.reasoning),
            tool_calls=calls,
            finish_reason=self.finish_reason or ("tool_calls" if calls else "stop"),
            usage=self.usage or Usage(estimated=True),
            request_id=request_id or self.response_id or f"req_{uuid.uuid4().hex[:24]}",
            model=self.model or model,
            response_id=self.response_id,
        )
        if self.usage is None:
            result = replace(result, usage=count_usage(result))
        events.append(UsageEvent(result.usage))
        events.append(FinishEvent(result))
        return events
