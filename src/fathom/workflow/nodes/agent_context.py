"""What an Agent / Tool Call node sends as context (spec §3.10, §3.11.10).

- **Checkpoint-aware histories**: a history checkpoint is stored on the AI chat item as a hidden value
  ``{type: contextCheckpoint, contextCheckpoint, hideInUI: true}``. The next turn starts from the
  newest one: leading system items, that AI item and everything after it (the node's N-rounds setting
  applies only when the chat has no checkpoint). The checkpoint value becomes one hidden user message
  (``contextCheckpoint: true``); the values before it on that item are what it summarises and are
  skipped, later values parse normally; :func:`fathom.agent.restore_from_newest_checkpoint` then cuts
  the transcript there.
- **Stop-gate rejections and plans**: a stored ``agentStopGate`` value is restored as the hidden user
  feedback it was; the newest stored plan snapshot, when unfinished, is the next turn's active plan.
- **The reminder**: the current user message carries ``<system-reminder>`` with this turn's files, the
  knowledge bases the node searches, the current time and the sandbox directory; historical user
  messages carry their files only.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from fathom.agent import (
    ReminderBackground,
    build_context_reminder,
    build_history_reminder,
    restore_from_newest_checkpoint,
)
from fathom.agent.system_tools import is_plan_finished
from fathom.workflow.dispatch import NodeContext
from fathom.workflow.variables import chat_value_to_text, get_histories

CHECKPOINT_VALUE = "contextCheckpoint"


def checkpoint_value(content: str) -> dict[str, Any]:
    """The hidden AI value that stores a checkpoint."""
    return {"type": CHECKPOINT_VALUE, CHECKPOINT_VALUE: content, "hideInUI": True}


def _checkpoint_index(value: Any) -> int:
    if not isinstance(value, list):
        return -1
    found = -1
    for index, item in enumerate(value):
        if isinstance(item, dict) and isinstance(item.get(CHECKPOINT_VALUE), str):
            found = index
    return found


def select_agent_histories(histories: list[dict[str, Any]], setting: Any) -> list[dict[str, Any]]:
    """The newest checkpoint's AI item and everything after it (plus leading system items), else the
    node's ``history`` setting."""
    if not setting:
        return []
    for index in range(len(histories) - 1, -1, -1):
        item = histories[index]
        if item.get("obj") == "AI" and _checkpoint_index(item.get("value")) >= 0:
            lead = [h for h in histories[:index] if h.get("obj") == "System"]
            return [*lead, *histories[index:]]
    return get_histories(setting, histories)


def file_entries(files: Sequence[Any]) -> list[dict[str, str]]:
    """Chat file values (``{type, name, url}``) or plain URLs as reminder file entries."""
    entries = []
    for item in files:
        if isinstance(item, str):
            url, name, kind = item, item.rsplit("/", 1)[-1] or item, "file"
        elif isinstance(item, dict):
            url = str(item.get("url") or "")
            name, kind = str(item.get("name") or url.rsplit("/", 1)[-1]), str(item.get("type") or "file")
        else:
            continue
        if url:
            entries.append({"name": name, "type": kind, "url": url})
    return entries


def history_messages(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat items as agent messages: files in a history reminder, the newest checkpoint as one hidden
    user message, restored from that checkpoint."""
    messages: list[dict[str, Any]] = []
    for item in items:
        obj, value = item.get("obj"), item.get("value")
        if obj == "System":
            text = value if isinstance(value, str) else chat_value_to_text(value)[0]
            if text:
                messages.append({"role": "system", "content": text})
        elif obj == "Human":
            text, files = chat_value_to_text(value)
            content = build_history_reminder(text, file_entries(files))
            if content:
                messages.append({"role": "user", "content": content})
        elif obj == "AI":
            values = value if isinstance(value, list) else [{"text": {"content": str(value or "")}}]
            cut = _checkpoint_index(values)
            if cut >= 0:
                checkpoint = str(values[cut][CHECKPOINT_VALUE])
                messages.append(
                    {"role": "user", "content": checkpoint, "hideInUI": True, CHECKPOINT_VALUE: True}
                )
                values = values[cut + 1 :]
            messages += _ai_messages(values)
    return list(restore_from_newest_checkpoint(messages))


def _ai_messages(values: list[Any]) -> list[dict[str, Any]]:
    """An AI item's text as assistant messages; a stop-gate rejection in between is restored as the
    hidden user feedback it was."""
    messages: list[dict[str, Any]] = []
    texts: list[Any] = []

    def flush() -> None:
        text = chat_value_to_text(texts)[0]
        if text:
            messages.append({"role": "assistant", "content": text})
        texts.clear()

    for item in values:
        if not isinstance(item, dict):
            continue
        gate = item.get("agentStopGate")
        if item.get("type") == "agentStopGate" and isinstance(gate, dict) and gate.get("feedback"):
            flush()
            feedback = str(gate["feedback"])
            messages.append({"role": "user", "content": feedback, "hideInUI": True, "stopGate": True})
        elif not item.get("hideInUI"):
            texts.append(item)
    flush()
    return messages


def restore_plan(histories: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The plan to continue (spec §3.7.1): the newest stored plan snapshot, when it is unfinished."""
    for item in reversed(histories):
        if item.get("obj") != "AI" or not isinstance(item.get("value"), list):
            continue
        for value in reversed(item["value"]):
            if isinstance(value, dict) and value.get("type") == "agentPlan":
                plan = value.get("agentPlan")
                return plan if isinstance(plan, dict) and not is_plan_finished(plan) else None
    return None


def current_files(ctx: NodeContext) -> list[dict[str, str]]:
    """This turn's files: the query's file values and the node's ``fileUrlList``."""
    _, files = chat_value_to_text(ctx.query)
    links = ctx.params.get("fileUrlList") or []
    entries = file_entries([*files, *(links if isinstance(links, list) else [links])])
    seen: set[str] = set()
    return [e for e in entries if not (e["url"] in seen or seen.add(e["url"]))]  # type: ignore[func-returns-value]


def current_user_message(
    ctx: NodeContext,
    question: str,
    *,
    files: Sequence[dict[str, str]],
    datasets: Sequence[dict[str, Any]],
    sandbox_workdir: str | None,
) -> str:
    """The current user message with its ``<system-reminder>``."""
    now = datetime.now().astimezone().strftime("%Y-%m-%d %H:%M:%S %Z").strip()
    return build_context_reminder(
        question,
        files=files,
        datasets=datasets,
        background=ReminderBackground(current_time=now, sandbox_workdir=sandbox_workdir),
    )
