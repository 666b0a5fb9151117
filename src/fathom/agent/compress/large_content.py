"""``compressLargeContent`` (spec §3.12.2): fit text into ``limit`` tokens, cheapest stage first.

1. unchanged when it fits; 2. URLs and base64 stripped; 3. full regex clean-up; 4. chunked model
compression (chunks in parallel, an empty answer keeps its chunk); 5. up to two merge rounds at
0.9 × limit, and deterministic head/tail truncation when a round gains under 5 %; 6. an under-filled
result gets source excerpts and missing exact anchors. A model failure returns the cleaned text unbilled.
"""

from __future__ import annotations

import asyncio
import math
import re
from dataclasses import dataclass, field

from fathom.agent.compress.constants import (
    APPROX_CHARS_PER_TOKEN,
    CHUNK_SIZE_RATIO,
    MERGED_COMPRESSION_MAX_ROUNDS,
    SOURCE_ANCHOR_APPEND_MAX_COUNT,
    SOURCE_ANCHOR_APPEND_SKIP_RATIO,
)
from fathom.agent.compress.llm_text import TextCall, call_for_text
from fathom.agent.compress.text_cleanup import BASE64_PATTERN, URL_PATTERN, head_tail_truncate, regex_cleanup
from fathom.agent.usage import TOOL_RESPONSE_COMPRESS_MODULE, AgentLoopUsage
from fathom.llm import count_tokens
from fathom.llm.protocols import ChatModel

MERGE_TARGET_RATIO = 0.9
MIN_MERGE_GAIN = 0.05
UNDERFILL_RATIO = 0.45
UNDERFILL_BASE_RATIO = 0.75
UNDERFILL_MIN_TOKENS_LEFT = 120
ANCHOR_CEILING_RATIO = 0.96
EXCERPTS_HEADER = "Source excerpts for exact labels and facts:"
ANCHORS_HEADER = "Source labels / exact anchors:"
COMPRESS_PROMPT = (
    "Compress the following content for an agent. Keep every fact it may need: names, numbers, ids, "
    "labels, errors and structure; drop repetition and boilerplate. Answer with the compressed content only."
)
_ANCHOR = re.compile(r"^\s*(#{1,6} .{1,80}|[A-Za-z][\w .()/-]{0,40}:)", re.M)


@dataclass
class LargeContentResult:
    """The fitted text, the usages of the model calls it took, and their request ids."""

    text: str
    usages: list[AgentLoopUsage] = field(default_factory=list)
    request_ids: list[str] = field(default_factory=list)


def _chunk_plan(text: str, limit: int, max_context: int) -> tuple[list[str], int]:
    """Chunks of ``tokens × 3`` characters, ``tokens = min(⌊0.5·ctx⌋, max(1, ⌊(ctx − limit)/2⌋))``, and the
    per-chunk output budget ``max(1, ⌊0.65·limit / chunks⌋)``."""
    tokens = min(math.floor(CHUNK_SIZE_RATIO * max_context), max(1, (max_context - limit) // 2))
    size = max(1, tokens * APPROX_CHARS_PER_TOKEN)
    chunks = [text[i : i + size] for i in range(0, len(text), size)] or [""]
    return chunks, max(1, math.floor(0.65 * limit / len(chunks)))


async def _compress_chunks(
    text: str, limit: int, model: ChatModel, max_context: int, user_key: bool
) -> tuple[str, list[TextCall]]:
    chunks, budget = _chunk_plan(text, limit, max_context)

    async def one(chunk: str) -> TextCall:
        messages = [
            {"role": "system", "content": COMPRESS_PROMPT},
            {"role": "user", "content": f"Budget: about {budget} tokens.\n\n{chunk}"},
        ]
        return await call_for_text(
            model, messages, module_name=TOOL_RESPONSE_COMPRESS_MODULE, max_tokens=budget, user_key=user_key
        )

    calls = await asyncio.gather(*(one(chunk) for chunk in chunks))
    joined = "\n\n".join(call.text.strip() or chunk for call, chunk in zip(calls, chunks, strict=True))
    return joined, list(calls)


def _fit_by_truncation(text: str, limit: int) -> str:
    """Head/tail truncation, then character truncation at 0.75× shrinking ×0.72 per step."""
    result = head_tail_truncate(text, limit)
    chars = math.floor(len(result) * 0.75)
    while count_tokens(result) > limit and chars > 1:
        result = result[:chars]
        chars = math.floor(chars * 0.72)
    return result


def _anchors(source: str) -> list[str]:
    seen: list[str] = []
    for match in _ANCHOR.finditer(source):
        anchor = match.group(1).strip()
        if anchor and anchor not in seen:
            seen.append(anchor)
    return seen


def _add_source_context(result: str, source: str, limit: int) -> str:
    """Top up an under-filled result with head/tail source excerpts, then missing exact anchors."""
    used = count_tokens(result)
    base = UNDERFILL_BASE_RATIO * limit
    if (
        count_tokens(source) <= limit
        or used >= UNDERFILL_RATIO * base
        or limit - used < UNDERFILL_MIN_TOKENS_LEFT
    ):
        return result
    room = max(1, math.floor(base) - used)
    excerpt = head_tail_truncate(source, room)
    text = f"{result}\n\n{EXCERPTS_HEADER}\n{excerpt}"
    if count_tokens(text) > limit:
        text = result
    if count_tokens(text) >= SOURCE_ANCHOR_APPEND_SKIP_RATIO * limit:
        return text
    missing = [a for a in _anchors(source) if a not in text][:SOURCE_ANCHOR_APPEND_MAX_COUNT]
    if not missing:
        return text
    lines = [f"\n\n{ANCHORS_HEADER}"]
    for anchor in missing:
        candidate = "".join([*lines, f"\n- {anchor}"])
        if count_tokens(text + candidate) > ANCHOR_CEILING_RATIO * limit:
            break
        lines.append(f"\n- {anchor}")
    return text + "".join(lines) if len(lines) > 1 else text


async def compress_large_content(
    text: str, limit: int, model: ChatModel, *, max_context: int, user_key: bool = False
) -> LargeContentResult:
    """Fit ``text`` into ``limit`` tokens (see the module docstring for the stages)."""
    if count_tokens(text) <= limit:
        return LargeContentResult(text)
    stripped = URL_PATTERN.sub("", BASE64_PATTERN.sub("[BASE64_DATA]", text))
    if count_tokens(stripped) <= limit:
        return LargeContentResult(stripped)
    cleaned = regex_cleanup(text)
    if count_tokens(cleaned) <= limit:
        return LargeContentResult(cleaned)
    result = LargeContentResult(cleaned)
    try:
        current, calls = await _compress_chunks(cleaned, limit, model, max_context, user_key)
        result.usages += [c.usage for c in calls]
        result.request_ids += [c.request_id for c in calls]
        for _ in range(MERGED_COMPRESSION_MAX_ROUNDS):
            if count_tokens(current) <= limit:
                break
            target = max(1, math.floor(MERGE_TARGET_RATIO * limit))
            merged, calls = await _compress_chunks(current, target, model, max_context, user_key)
            result.usages += [c.usage for c in calls]
            result.request_ids += [c.request_id for c in calls]
            gain = 1 - len(merged) / max(1, len(current))
            current = merged
            if gain < MIN_MERGE_GAIN:
                break
    except Exception:
        return LargeContentResult(_fit_by_truncation(cleaned, limit))
    if count_tokens(current) > limit:
        current = _fit_by_truncation(current, limit)
    result.text = _add_source_context(current, cleaned, limit)
    return result


def sum_usages(usages: list[AgentLoopUsage], model_id: str) -> AgentLoopUsage | None:
    """One ``tool_response_compress`` usage for all the calls (None when there were none)."""
    if not usages:
        return None
    return AgentLoopUsage(
        module_name=TOOL_RESPONSE_COMPRESS_MODULE,
        total_points=sum(u.total_points for u in usages),
        model_id=model_id,
        input_tokens=sum(u.input_tokens or 0 for u in usages),
        output_tokens=sum(u.output_tokens or 0 for u in usages),
    )
