"""History checkpoint compression (spec §3.11): summarise everything but system messages into one
hidden ``<context_checkpoint>`` user message when the context passes 80 % of the window."""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from fathom.agent.compress.constants import (
    ACTIVE_PLAN_END_TAG,
    ACTIVE_PLAN_START_TAG,
    CONTEXT_CHECKPOINT_END_TAG,
    CONTEXT_CHECKPOINT_START_TAG,
    REQUEST_CHECKPOINT_COMPLETION_ACCEPT_CONTEXT_RATIO,
    checkpoint_target,
    message_threshold,
)
from fathom.agent.compress.llm_text import call_for_text
from fathom.agent.usage import COMPRESS_MESSAGES_MODULE, AgentLoopUsage
from fathom.llm import count_message_tokens, count_tokens
from fathom.llm.protocols import ChatModel

log = logging.getLogger(__name__)

CHECKPOINT_SYSTEM_PROMPT = (
    "You compress a long agent conversation into a context checkpoint the agent will continue from. "
    "Keep: the user's goal and constraints, key facts and decisions, tool results that still matter "
    "(exact names, numbers, ids, paths, URLs), resources produced, open questions and the next steps. "
    "Drop chit-chat and superseded details. Never invent a plan: the runtime keeps the plan. "
    f"Answer with exactly one block {CONTEXT_CHECKPOINT_START_TAG} ... {CONTEXT_CHECKPOINT_END_TAG}."
)

_FENCE_START = re.compile(r"^```(?:markdown|md|text)?[ \t]*\n", re.IGNORECASE)
_FENCE_END = re.compile(r"\n?```\s*$")


def _normalize_checkpoint_content(text: str) -> str:
    """Trim, strip a leading ```markdown|md|text fence and the trailing fence, keep the first tagged
    block when both tags are present, else wrap the whole text in the tags."""
    value = text.strip()
    if _FENCE_START.match(value):
        value = _FENCE_START.sub("", value, count=1)
        value = _FENCE_END.sub("", value).strip()
    start = value.find(CONTEXT_CHECKPOINT_START_TAG)
    end = value.find(CONTEXT_CHECKPOINT_END_TAG, start + 1) if start >= 0 else -1
    if start >= 0 and end > start:
        return value[start : end + len(CONTEXT_CHECKPOINT_END_TAG)]
    return f"{CONTEXT_CHECKPOINT_START_TAG}\n{value}\n{CONTEXT_CHECKPOINT_END_TAG}"


def _active_plan_block(plan: dict[str, Any]) -> str:
    """``<active_plan>`` + pretty JSON (literal ``</active_plan>`` escaped) + ``</active_plan>``."""
    body = json.dumps(plan, ensure_ascii=False, indent=2).replace(ACTIVE_PLAN_END_TAG, "<\\/active_plan>")
    return f"{ACTIVE_PLAN_START_TAG}\n{body}\n{ACTIVE_PLAN_END_TAG}\n"


def _checkpoint_content(checkpoint: str, active_plan: dict[str, Any] | None) -> str:
    """The stored checkpoint: the runtime's plan block (if any) in front of the normalised summary."""
    return (_active_plan_block(active_plan) if active_plan else "") + checkpoint


def _is_checkpoint_message(message: Any) -> bool:
    """A hidden user message holding a checkpoint."""
    if not isinstance(message, dict) or message.get("role") != "user":
        return False
    content = message.get("content")
    if not isinstance(content, str):
        return False
    return bool(message.get("contextCheckpoint")) or (
        content.startswith((CONTEXT_CHECKPOINT_START_TAG, ACTIVE_PLAN_START_TAG))
        and CONTEXT_CHECKPOINT_END_TAG in content
    )


def restore_from_newest_checkpoint(messages: Sequence[Any]) -> list[Any]:
    """Leading system messages + the newest checkpoint message + everything after it.

    A checkpoint never separates a tool call from its result: tool replies right after the
    checkpoint whose call lies before it (the checkpoint summarises both) are dropped too."""
    items = list(messages)
    newest = max((i for i, m in enumerate(items) if _is_checkpoint_message(m)), default=-1)
    if newest < 0:
        return items
    lead = [m for m in items[:newest] if isinstance(m, dict) and m.get("role") in ("system", "developer")]
    rest = items[newest + 1 :]
    while rest and isinstance(rest[0], dict) and rest[0].get("role") == "tool":
        rest.pop(0)
    return [*lead, items[newest], *rest]


def _histories(messages: Sequence[dict[str, Any]]) -> str:
    lines = [json.dumps(m, ensure_ascii=False, default=str) for m in messages]
    return "<histories>\n" + "\n".join(lines) + "\n</histories>"


@dataclass
class CheckpointOutcome:
    """Result of a checkpoint attempt; ``messages`` is unchanged unless ``context_checkpoint`` is set."""

    messages: list[dict[str, Any]]
    context_checkpoint: str | None = None
    usage: AgentLoopUsage | None = None
    request_ids: list[str] = field(default_factory=list)
    seconds: float = 0.0
    status: str = "unchanged"


def needs_checkpoint(token_count: int, max_context: int) -> bool:
    """True when ``token_count`` (messages + tools schema) is above the 80 % threshold."""
    return token_count > message_threshold(max_context)


async def compress_history(
    messages: Sequence[dict[str, Any]],
    model: ChatModel,
    *,
    max_context: int,
    active_plan: dict[str, Any] | None = None,
    token_count: int | None = None,
    tools: Sequence[Any] | None = None,
    user_key: bool = False,
    params: dict[str, Any] | None = None,
) -> CheckpointOutcome:
    """Summarise ``messages`` into a checkpoint when they (plus ``tools``) exceed the threshold."""
    items = list(messages)
    count = token_count if token_count is not None else count_message_tokens(items, tools)
    system = [m for m in items if m.get("role") in ("system", "developer")]
    rest = [m for m in items if m.get("role") not in ("system", "developer")]
    if not rest or not needs_checkpoint(count, max_context):
        return CheckpointOutcome(items)
    target = checkpoint_target(max_context)
    prompt = (
        f"Write the context checkpoint (at most about {target} tokens) for this conversation.\n\n"
        + _histories(rest)
    )
    started = time.monotonic()
    try:
        call = await call_for_text(
            model,
            [{"role": "system", "content": CHECKPOINT_SYSTEM_PROMPT}, {"role": "user", "content": prompt}],
            module_name=COMPRESS_MESSAGES_MODULE,
            max_tokens=target,
            user_key=user_key,
            params=params,
        )
    except Exception as exc:
        log.warning("context checkpoint failed: %s", exc)
        return CheckpointOutcome(items, seconds=time.monotonic() - started, status="error")
    seconds = time.monotonic() - started
    if call.finish_reason == "close":
        log.info("context checkpoint: request_closed")
        return CheckpointOutcome(items, None, call.usage, [call.request_id], seconds, "request_closed")
    if not call.text.strip():
        log.info("context checkpoint: empty_response")
        return CheckpointOutcome(items, None, call.usage, [call.request_id], seconds, "empty_response")
    checkpoint = _normalize_checkpoint_content(call.text)
    out_tokens = count_tokens(checkpoint)
    if out_tokens > max_context * REQUEST_CHECKPOINT_COMPLETION_ACCEPT_CONTEXT_RATIO or out_tokens > target:
        log.warning("context checkpoint larger than its budget: %d tokens (target %d)", out_tokens, target)
    content = _checkpoint_content(checkpoint, active_plan)
    result = [*system, {"role": "user", "content": content, "hideInUI": True}]
    return CheckpointOutcome(result, content, call.usage, [call.request_id], seconds, "compressed")
