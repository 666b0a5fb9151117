"""Prompt-mode tool calling for models without native function calling (``function_calling: false``).

The tools are described in the system prompt; the model writes ``<tool_call>{"name": ..., "arguments":
{...}}</tool_call>`` blocks, which are parsed into ordinary tool calls. The run's transcript keeps the
OpenAI shape (assistant ``tool_calls`` + ``tool`` messages); only the request is rendered as text.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import Any

TOOL_CALL_START = "<tool_call>"
TOOL_CALL_END = "</tool_call>"


def _prompt_tools_instruction(schemas: Sequence[dict[str, Any]]) -> str:
    """The system-prompt section that describes the tools and the call syntax."""
    tools = [
        {
            "name": s["function"]["name"],
            "description": s["function"].get("description", ""),
            "parameters": s["function"].get("parameters") or {"type": "object", "properties": {}},
        }
        for s in schemas
    ]
    return (
        "You can call tools. To call one, write a block on its own line:\n"
        f'{TOOL_CALL_START}{{"name": "<tool name>", "arguments": {{...}}}}{TOOL_CALL_END}\n'
        "You may write several blocks; then stop and wait: the results come back in <tool_response> "
        "blocks. When you can answer, reply normally without any tool_call block.\n"
        "<tools>\n" + json.dumps(tools, ensure_ascii=False, indent=1) + "\n</tools>"
    )


def _call_text(call: dict[str, Any]) -> str:
    function = call.get("function") or {}
    raw = function.get("arguments") or ""
    try:
        arguments: Any = json.loads(raw) if raw.strip() else {}
    except ValueError:
        arguments = raw
    payload = json.dumps({"name": function.get("name", ""), "arguments": arguments}, ensure_ascii=False)
    return f"{TOOL_CALL_START}{payload}{TOOL_CALL_END}"


def to_prompt_messages(
    messages: Sequence[dict[str, Any]], schemas: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Render a native transcript as plain text turns, with the tool instruction in the system prompt."""
    names = {}
    out: list[dict[str, Any]] = []
    instruction = _prompt_tools_instruction(schemas) if schemas else ""
    for message in messages:
        role = message.get("role")
        if role == "assistant" and message.get("tool_calls"):
            parts = [str(message.get("content") or "")] + [_call_text(c) for c in message["tool_calls"]]
            for call in message["tool_calls"]:
                names[call.get("id")] = (call.get("function") or {}).get("name", "")
            out.append({"role": "assistant", "content": "\n".join(p for p in parts if p)})
        elif role == "tool":
            call_id = message.get("tool_call_id")
            block = (
                f'<tool_response name="{names.get(call_id, "")}" id="{call_id}">\n'
                f"{message.get('content') or ''}\n</tool_response>"
            )
            if out and out[-1].get("role") == "user" and out[-1].get("_tool_results"):
                out[-1]["content"] += "\n" + block
            else:
                out.append({"role": "user", "content": block, "_tool_results": True})
        else:
            out.append({k: v for k, v in message.items() if k in ("role", "content", "name")})
    for message in out:
        message.pop("_tool_results", None)
    if instruction:
        if out and out[0].get("role") == "system":
            out[0] = {**out[0], "content": f"{out[0].get('content') or ''}\n\n{instruction}".strip()}
        else:
            out.insert(0, {"role": "system", "content": instruction})
    return out


class ToolTextFilter:
    """Streams answer text while cutting out ``<tool_call>`` blocks, which it collects."""

    def __init__(self) -> None:
        self._buffer = ""
        self._in_block = False
        self.blocks: list[str] = []
        self.text = ""

    def feed(self, delta: str) -> str:
        """Add streamed text; return the part that is safe to show as answer."""
        self._buffer += delta
        shown = ""
        while True:
            if self._in_block:
                end = self._buffer.find(TOOL_CALL_END)
                if end < 0:
                    break
                self.blocks.append(self._buffer[:end])
                self._buffer = self._buffer[end + len(TOOL_CALL_END) :]
                self._in_block = False
                continue
            start = self._buffer.find(TOOL_CALL_START)
            if start >= 0:
                shown += self._buffer[:start]
                self._buffer = self._buffer[start + len(TOOL_CALL_START) :]
                self._in_block = True
                continue
            hold = 0
            for size in range(min(len(TOOL_CALL_START) - 1, len(self._buffer)), 0, -1):
                if TOOL_CALL_START.startswith(self._buffer[-size:]):
                    hold = size
                    break
            shown += self._buffer[: len(self._buffer) - hold]
            self._buffer = self._buffer[len(self._buffer) - hold :]
            break
        self.text += shown
        return shown

    def finish(self) -> str:
        """End of stream: an unterminated block still counts as a call; held-back text is released."""
        rest = ""
        if self._in_block:
            self.blocks.append(self._buffer)
        else:
            rest = self._buffer
        self._buffer, self._in_block = "", False
        self.text += rest
        return rest


def parse_tool_blocks(blocks: Sequence[str]) -> list[dict[str, Any]]:
    """Tool calls (wire form, fresh ids) from the collected blocks; bad JSON gives a nameless call."""
    calls = []
    for block in blocks:
        name, arguments = "", block.strip()
        try:
            data = json.loads(block.strip())
        except ValueError:
            data = None
        if isinstance(data, dict):
            name = str(data.get("name") or data.get("toolId") or data.get("tool") or "")
            args = data.get("arguments", data.get("args", data.get("parameters", {})))
            arguments = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
        calls.append(
            {
                "id": f"call_{uuid.uuid4().hex[:16]}",
                "type": "function",
                "function": {"name": name, "arguments": arguments},
            }
        )
    return calls
