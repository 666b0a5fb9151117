"""Plain-dict helpers for OpenAI-format messages and tool calls (inputs may be dicts or SDK models)."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

REQUEST_MESSAGE_KEYS = ("role", "content", "name", "tool_calls", "tool_call_id")


def _to_plain(item: Any) -> dict[str, Any]:
    """A deep-copied plain dict from a dict or a pydantic/SDK model."""
    if isinstance(item, Mapping):
        return copy.deepcopy(dict(item))
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        value = dump(exclude_none=True, by_alias=True)
        if isinstance(value, dict):
            return value
    raise TypeError(f"not an OpenAI message or tool call: {item!r}")


def plain_messages(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """Every message as a plain dict."""
    return [_to_plain(message) for message in messages]


def _plain_call(call: Any) -> dict[str, Any]:
    """A tool call in wire form ``{id, type: function, function: {name, arguments}}``."""
    data = _to_plain(call)
    function = dict(data.get("function") or {})
    return {
        "id": str(data.get("id") or ""),
        "type": "function",
        "function": {"name": str(function.get("name") or ""), "arguments": function.get("arguments") or ""},
    }


def request_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """What is sent to the model: only OpenAI message keys (no ``hideInUI`` and the like)."""
    return {key: message[key] for key in REQUEST_MESSAGE_KEYS if key in message}


def initial_messages(messages: Sequence[Any], system_prompt: str | None) -> list[dict[str, Any]]:
    """``[system(systemPrompt)?] + messages`` with every system message stripped (spec §3.6.2)."""
    rest = [m for m in plain_messages(messages) if m.get("role") != "system"]
    return ([{"role": "system", "content": system_prompt}] if system_prompt else []) + rest


def find_tool_call(messages: Sequence[Mapping[str, Any]], call_id: str) -> dict[str, Any] | None:
    """The assistant tool call with ``call_id`` (newest first)."""
    for message in reversed(messages):
        if message.get("role") != "assistant":
            continue
        for call in message.get("tool_calls") or []:
            if isinstance(call, Mapping) and call.get("id") == call_id:
                return _plain_call(call)
    return None


def tool_message(call_id: str, content: str) -> dict[str, Any]:
    """``{role: tool, tool_call_id, content}``."""
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def is_empty_assistant(message: Mapping[str, Any]) -> bool:
    """An assistant message with neither content nor tool calls (filtered from tool output)."""
    return message.get("role") == "assistant" and not message.get("content") and not message.get("tool_calls")
