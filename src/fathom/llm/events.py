"""Typed events of a streamed chat completion, and the assembled result.

A stream yields, in order: ``TextDelta`` / ``ReasoningDelta`` fragments, a ``ToolCallStart`` when a
tool call is discovered (id and name known), ``ToolParamsDelta`` for each argument fragment of that call,
then one ``UsageEvent`` and one ``FinishEvent`` carrying the assembled :class:`CompletionResult`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of one model call; ``estimated`` is True when counted locally (no server usage)."""

    input_tokens: int = 0
    output_tokens: int = 0
    estimated: bool = False

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One function call requested by the model; ``arguments`` is the raw JSON text as streamed."""

    id: str
    name: str
    arguments: str = ""

    def parsed_arguments(self) -> Any:
        """The arguments decoded from JSON (``{}`` when empty); raises ValueError when not JSON."""
        return json.loads(self.arguments) if self.arguments.strip() else {}

    def to_openai(self) -> dict[str, Any]:
        """The OpenAI wire form used in an assistant message's ``tool_calls``."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True, slots=True)
class CompletionResult:
    """An assembled chat completion (what ``complete()`` returns and ``FinishEvent`` carries)."""

    content: str
    reasoning: str
    tool_calls: tuple[ToolCall, ...]
    finish_reason: str
    usage: Usage
    request_id: str
    model: str
    response_id: str | None = None

    @property
    def message(self) -> dict[str, Any]:
        """The assistant message in OpenAI format, ready to append to a transcript."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content or None}
        if self.reasoning:
            message["reasoning_content"] = self.reasoning
        if self.tool_calls:
            message["tool_calls"] = [call.to_openai() for call in self.tool_calls]
        elif message["content"] is None:
            message["content"] = ""
        return message


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A fragment of the answer text."""

    text: str
    type: Literal["text_delta"] = "text_delta"


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A fragment of ``reasoning_content`` (models that stream their thinking)."""

    text: str
    type: Literal["reasoning_delta"] = "reasoning_delta"


@dataclass(frozen=True, slots=True)
class ToolCallStart:
    """A tool call was discovered: its id and function name are known; arguments follow."""

    call_id: str
    name: str
    index: int
    type: Literal["tool_call"] = "tool_call"


@dataclass(frozen=True, slots=True)
class ToolParamsDelta:
    """A fragment of one tool call's JSON arguments (FastGPT's ``argsDelta``)."""

    call_id: str
    args_delta: str
    type: Literal["tool_params"] = "tool_params"


@dataclass(frozen=True, slots=True)
class UsageEvent:
    """Token usage of the call (from the stream's usage chunk, else counted locally)."""

    usage: Usage
    type: Literal["usage"] = "usage"


@dataclass(frozen=True, slots=True)
class FinishEvent:
    """The stream ended; carries finish reason, request id and the assembled result."""

    result: CompletionResult
    type: Literal["finish"] = "finish"

    @property
    def finish_reason(self) -> str:
        """Why the model stopped (``stop``, ``tool_calls``, ``length``, ...)."""
        return self.result.finish_reason

    @property
    def request_id(self) -> str:
        """The endpoint's request id (``x-request-id``), else the completion id, else a local id."""
        return self.result.request_id


StreamEvent = TextDelta | ReasoningDelta | ToolCallStart | ToolParamsDelta | UsageEvent | FinishEvent
