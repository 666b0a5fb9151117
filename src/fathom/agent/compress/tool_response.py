"""Tool-response compression (spec §3.12): local light processing first, an LLM only when needed."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from fathom.agent.compress.constants import (
    TOOL_RESPONSE_DIRECT_RETURN_CONTEXT_RATIO,
    TOOL_RESPONSE_LIGHT_PROCESS_CONTEXT_RATIO,
    get_compression_token_limit,
)
from fathom.agent.compress.large_content import compress_large_content, sum_usages
from fathom.agent.compress.text_cleanup import regex_cleanup
from fathom.agent.usage import AgentLoopUsage
from fathom.llm import count_tokens
from fathom.llm.protocols import ChatModel

PRIORITY_KEYS = (
    "id",
    "name",
    "type",
    "function",
    "arguments",
    "tool_calls",
    "tools",
    "messages",
    "role",
    "content",
)
MAX_SCALARS = 80
MAX_SCALAR_CHARS = 100
MAX_DEPTH = 6
MAX_CHILD_KEYS = 12

TOOL_COMPRESS_SYSTEM_PROMPT = (
    "Compress this tool output for an agent that will act on it. Keep every fact the agent may need: "
    "names, numbers, ids, error messages, structure. Drop repetition and boilerplate. Answer with the "
    "compressed content only."
)


def _ordered_keys(obj: dict[str, Any]) -> list[str]:
    keys = list(obj)
    return sorted(keys, key=lambda k: PRIORITY_KEYS.index(k) if k in PRIORITY_KEYS else len(PRIORITY_KEYS))


def _json_structural_summary(value: Any) -> str:
    """A JSON summary: important scalars (``key=value``), structure lines and sampled arrays."""
    scalars: list[str] = []
    structure: list[str] = []

    def walk(node: Any, path: str, depth: int) -> None:
        if depth > MAX_DEPTH:
            return
        if isinstance(node, dict):
            keys = _ordered_keys(node)
            structure.append(f"{path or '$'} keys: {', '.join(keys[:MAX_CHILD_KEYS])}")
            for key in keys[:MAX_CHILD_KEYS]:
                walk(node[key], f"{path}.{key}" if path else key, depth + 1)
        elif isinstance(node, list):
            structure.append(f"{path or '$'}: array(length={len(node)})")
            sample = [0, len(node) - 1] if len(node) > 1 else [0] if node else []
            for index in sample:
                walk(node[index], f"{path}[{index}]", depth + 1)
        elif len(scalars) < MAX_SCALARS:
            text = json.dumps(node, ensure_ascii=False) if not isinstance(node, str) else node
            if len(text) <= MAX_SCALAR_CHARS:
                scalars.append(f"{path}={text}")

    walk(value, "", 0)
    return json.dumps(
        {"summaryType": "JSON structural summary", "values": scalars, "structure": structure},
        ensure_ascii=False,
        separators=(",", ":"),
    )


def _light_process(text: str, target_tokens: int) -> str:
    """Local clean-up: JSON is minified (then summarised if still too big and the summary fits);
    other text goes through :func:`regex_cleanup`."""
    try:
        value = json.loads(text)
    except ValueError:
        return regex_cleanup(text)
    if not isinstance(value, dict | list):
        return regex_cleanup(text)
    minified = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if count_tokens(minified) <= target_tokens:
        return minified
    summary = _json_structural_summary(value)
    if len(summary) < len(minified) and count_tokens(summary) <= target_tokens:
        return summary
    return minified


@dataclass
class ToolCompressOutcome:
    """A tool response after compression; ``usage`` is set when an LLM was called."""

    response: str
    compressed: bool = False
    usage: AgentLoopUsage | None = None
    request_ids: list[str] = field(default_factory=list)
    seconds: float = 0.0


async def compress_tool_response(
    response: str, model: ChatModel, *, max_context: int, user_key: bool = False
) -> ToolCompressOutcome:
    """Unchanged when within 20 % of the window (min 4096); else light processing, and an LLM
    compression to that limit only when the light result is still above 50 %."""
    direct = get_compression_token_limit(max_context, TOOL_RESPONSE_DIRECT_RETURN_CONTEXT_RATIO)
    if count_tokens(response) <= direct:
        return ToolCompressOutcome(response)
    started = time.monotonic()
    light = _light_process(response, direct)
    light_limit = get_compression_token_limit(max_context, TOOL_RESPONSE_LIGHT_PROCESS_CONTEXT_RATIO)
    if count_tokens(light) <= light_limit:
        return ToolCompressOutcome(light, True, seconds=time.monotonic() - started)
    fitted = await compress_large_content(light, direct, model, max_context=max_context, user_key=user_key)
    usage = sum_usages(fitted.usages, model.config.id)
    return ToolCompressOutcome(fitted.text, True, usage, fitted.request_ids, time.monotonic() - started)
