"""Message conversion between OpenAI-format dicts and pydantic-ai's message model (pydanticAI provider)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any


def to_pydantic_ai_history(messages: Sequence[dict[str, Any]]) -> tuple[list[Any], str | None]:
    """OpenAI messages → (pydantic-ai ``ModelMessage`` list, system prompt text or None)."""
    from pydantic_ai.messages import (
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )

    history: list[Any] = []
    system: list[str] = []
    names: dict[str, str] = {}
    pending: list[Any] = []

    def flush() -> None:
        if pending:
            history.append(ModelRequest(parts=list(pending)))
            pending.clear()

    for message in messages:
        role = message.get("role")
        content = message.get("content")
        text = (
            content
            if isinstance(content, str)
            else json.dumps(content, ensure_ascii=False)
            if content
            else ""
        )
        if role in ("system", "developer"):
            system.append(text)
        elif role == "user":
            pending.append(UserPromptPart(text))
        elif role == "tool":
            call_id = str(message.get("tool_call_id") or "")
            pending.append(ToolReturnPart(names.get(call_id, ""), text, call_id))
        elif role == "assistant":
            flush()
            parts: list[Any] = [TextPart(text)] if text else []
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                names[call["id"]] = function.get("name", "")
                parts.append(
                    ToolCallPart(function.get("name", ""), function.get("arguments") or "{}", call["id"])
                )
            history.append(ModelResponse(parts=parts or [TextPart("")]))
    flush()
    return history, ("\n\n".join(system) if system else None)


def from_pydantic_ai_messages(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """New pydantic-ai messages → OpenAI assistant/tool messages (user prompts are skipped)."""
    from pydantic_ai.messages import (
        ModelResponse,
        RetryPromptPart,
        TextPart,
        ThinkingPart,
        ToolCallPart,
        ToolReturnPart,
    )

    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, ModelResponse):
            text = "".join(p.content for p in message.parts if isinstance(p, TextPart))
            reasoning = "".join(p.content for p in message.parts if isinstance(p, ThinkingPart))
            calls = [
                {
                    "id": p.tool_call_id,
                    "type": "function",
                    "function": {"name": p.tool_name, "arguments": p.args_as_json_str()},
                }
                for p in message.parts
                if isinstance(p, ToolCallPart)
            ]
            item: dict[str, Any] = {"role": "assistant", "content": text or ("" if not calls else None)}
            if reasoning:
                item["reasoning_content"] = reasoning
            if calls:
                item["tool_calls"] = calls
            out.append(item)
            continue
        for part in getattr(message, "parts", []):
            if isinstance(part, ToolReturnPart):
                content = part.content if isinstance(part.content, str) else part.model_response_str()
                out.append({"role": "tool", "tool_call_id": part.tool_call_id, "content": content})
            elif isinstance(part, RetryPromptPart) and part.tool_name:
                out.append(
                    {"role": "tool", "tool_call_id": part.tool_call_id, "content": part.model_response()}
                )
    return out
