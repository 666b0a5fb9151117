"""What the scripted model says: turns (text, tool calls, errors) and their OpenAI wire rendering."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ScriptedToolCall:
    """One tool call the scripted model makes. ``arguments`` may be a dict (sent as JSON) or raw text."""

    name: str
    arguments: str | dict[str, Any] = field(default_factory=dict)
    id: str | None = None

    @property
    def arguments_text(self) -> str:
        """The arguments as the JSON text that goes on the wire."""
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, ensure_ascii=False)


@dataclass(frozen=True)
class Turn:
    """One reply of the scripted model.

    ``status`` other than 200 makes it an error reply (body ``{"error": {...}}``, e.g. 429 or 500 to
    exercise retries). ``usage=(prompt, completion)`` fixes the reported usage; None counts it with
    cl100k. ``send_usage=False`` mimics servers that ignore ``stream_options.include_usage``.
    ``stream_error`` sends an error event after the content, mid-stream. ``delay`` is slept before each
    streamed chunk.
    """

    content: str = ""
    reasoning: str = ""
    tool_calls: tuple[ScriptedToolCall, ...] = ()
    finish_reason: str | None = None
    usage: tuple[int, int] | None = None
    send_usage: bool = True
    status: int = 200
    error: str = ""
    error_type: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    text_chunk_chars: int = 4
    arg_fragments: int = 3
    delay: float = 0.0
    stream_error: str = ""

    @property
    def resolved_finish_reason(self) -> str:
        """``tool_calls`` when the turn calls tools, else ``stop``, unless set explicitly."""
        return self.finish_reason or ("tool_calls" if self.tool_calls else "stop")


def text_turn(content: str, *, reasoning: str = "", **options: Any) -> Turn:
    """A turn that answers with ``content`` (optionally streaming ``reasoning`` first)."""
    return Turn(content=content, reasoning=reasoning, **options)


def _as_call(raw: ScriptedToolCall | Sequence[Any] | dict[str, Any]) -> ScriptedToolCall:
    if isinstance(raw, ScriptedToolCall):
        return raw
    if isinstance(raw, dict):
        function = raw.get("function")
        if isinstance(function, dict):  # OpenAI wire form
            return ScriptedToolCall(function["name"], function.get("arguments", {}), raw.get("id"))
        return ScriptedToolCall(raw["name"], raw.get("arguments", {}), raw.get("id"))
    name, arguments, *rest = raw
    return ScriptedToolCall(name, arguments, rest[0] if rest else None)


def tool_call_turn(
    calls: Sequence[ScriptedToolCall | Sequence[Any] | dict[str, Any]], *, content: str = "", **options: Any
) -> Turn:
    """A turn calling tools: items are ``(name, args)``, ``(name, args, id)``, dicts or ScriptedToolCall."""
    return Turn(content=content, tool_calls=tuple(_as_call(call) for call in calls), **options)


def error_turn(status: int, message: str = "", *, retry_after: float | None = None, **options: Any) -> Turn:
    """An HTTP error reply (429/500 to test retries, 400 to test that 4xx is not retried)."""
    headers = dict(options.pop("headers", {}))
    if retry_after is not None:
        headers["retry-after-ms"] = str(int(retry_after * 1000))
    kind = (
        "rate_limit_error" if status == 429 else "server_error" if status >= 500 else "invalid_request_error"
    )
    return Turn(
        status=status,
        error=message or f"scripted error {status}",
        error_type=options.pop("error_type", kind),
        headers=headers,
        **options,
    )


def turn_from_dict(data: dict[str, Any] | str) -> Turn:
    """A turn from plain data (a script file): a string, or Turn's fields with ``tool_calls`` as dicts."""
    if isinstance(data, str):
        return text_turn(data)
    fields = dict(data)
    calls = fields.pop("tool_calls", None) or []
    if "usage" in fields and fields["usage"] is not None:
        fields["usage"] = tuple(fields["usage"])
    return Turn(tool_calls=tuple(_as_call(call) for call in calls), **fields)


def _pieces(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)]


def _fragments(text: str, count: int) -> list[str]:
    if not text:
        return [""]
    count = max(1, min(count, len(text)))
    step = -(-len(text) // count)
    return [text[i : i + step] for i in range(0, len(text), step)]


def call_ids(turn: Turn, turn_number: int) -> list[str]:
    """Tool call ids of a turn (given ids, else ``call_{turn}_{index}``)."""
    return [call.id or f"call_{turn_number}_{i}" for i, call in enumerate(turn.tool_calls)]


def stream_chunks(turn: Turn, *, completion_id: str, model: str, ids: list[str]) -> list[dict[str, Any]]:
    """The ``chat.completion.chunk`` objects of a streamed turn (without usage and ``[DONE]``)."""
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [choice],
        }

    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [
        chunk({"reasoning_content": piece}) for piece in _pieces(turn.reasoning, turn.text_chunk_chars)
    ]
    chunks += [chunk({"content": piece}) for piece in _pieces(turn.content, turn.text_chunk_chars)]
    for index, (call, call_id) in enumerate(zip(turn.tool_calls, ids, strict=True)):
        head = {
            "index": index,
            "id": call_id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        chunks.append(chunk({"tool_calls": [head]}))
        for fragment in _fragments(call.arguments_text, turn.arg_fragments):
            chunks.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]}))
    chunks.append(chunk({}, turn.resolved_finish_reason))
    return chunks


def completion_body(
    turn: Turn, *, completion_id: str, model: str, ids: list[str], usage: dict[str, int]
) -> dict[str, Any]:
    """The non-streamed ``chat.completion`` object of a turn."""
    message: dict[str, Any] = {"role": "assistant", "content": turn.content or None}
    if turn.reasoning:
        message["reasoning_content"] = turn.reasoning
    if turn.tool_calls:
        message["tool_calls"] = [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments_text},
            }
            for call, call_id in zip(turn.tool_calls, ids, strict=True)
        ]
    elif message["content"] is None:
        message["content"] = ""
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": turn.resolved_finish_reason}
        ],
        "usage": usage,
    }


def error_body(turn: Turn) -> dict[str, Any]:
    """The OpenAI-style error object of an error turn."""
    return {
        "error": {"message": turn.error, "type": turn.error_type, "param": None, "code": str(turn.status)}
    }
