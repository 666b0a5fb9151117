"""The system prompt a provider sends (``llmParams.promptMode``, spec §3.3.1).

``raw`` (the Tool Call node, and the library default) sends the caller's system prompt as given.
``fastAgent`` (the Agent node) puts Fathom's agent guide in front of it: one paragraph for the loop
and one for each system tool the run offers, so the model knows how the runtime treats plans, asks,
the sandbox, conversation files and knowledge-base search. Both providers call
:func:`compose_system_prompt`; the text is Fathom's own (FastGPT's prompt is not part of the spec).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

PromptMode = Literal["fastAgent", "raw"]
PROMPT_MODES: tuple[PromptMode, ...] = ("fastAgent", "raw")

AGENT_GUIDE = (
    "You are an agent working on the user's task. Use the tools you are given when they help, read "
    "their results before you go on, and answer the user directly when the task is done."
)
TOOL_GUIDES: dict[str, str] = {
    "plan": (
        "For a task with several steps, call set_plan with the steps first, keep the plan current with "
        "update_plan while you work, and mark every step done, skipped or blocked before your final "
        "answer: the runtime sends you back to work while steps are unresolved."
    ),
    "ask": (
        "When you cannot go on without the user (a missing input, an ambiguous goal, a choice only they "
        "can make), call ask_user instead of guessing."
    ),
    "sandbox": (
        "You have a sandbox workspace: read, write, edit and search files there with the sandbox_* tools."
    ),
    "read_files": "Read the conversation's documents with read_files before you rely on their content.",
    "dataset_search": (
        "Search the knowledge bases listed in the reminder with dataset_search before you answer a "
        "question they may cover, and base the answer on what you found."
    ),
}
GUIDE_ORDER = ("plan", "ask", "sandbox", "read_files", "dataset_search")


class UnknownPromptModeError(ValueError):
    """``Unknown prompt mode: {mode} (use fastAgent or raw)``."""

    def __init__(self, mode: object) -> None:
        super().__init__(f"Unknown prompt mode: {mode} (use fastAgent or raw)")


def compose_system_prompt(
    system_prompt: str | None, prompt_mode: str, tool_kinds: Iterable[str] = ()
) -> str | None:
    """The system message content for ``prompt_mode`` given the kinds of the offered tools."""
    if prompt_mode == "raw":
        return system_prompt
    if prompt_mode != "fastAgent":
        raise UnknownPromptModeError(prompt_mode)
    kinds = set(tool_kinds)
    parts = [AGENT_GUIDE, *(TOOL_GUIDES[kind] for kind in GUIDE_ORDER if kind in kinds)]
    if system_prompt:
        parts.append(system_prompt)
    return "\n\n".join(parts)


__all__ = [
    "AGENT_GUIDE",
    "PROMPT_MODES",
    "TOOL_GUIDES",
    "PromptMode",
    "UnknownPromptModeError",
    "compose_system_prompt",
]
