"""Suggested next questions (FastGPT's question guide, ``createQuestionGuide``): the last turns of a
chat, FastGPT's prompt, and three short questions parsed from the model's answer.

FastGPT's chat page asks for them after each answer when the app's ``chatConfig.questionGuide`` is on
(its completions stream carries nothing for them); Fathom's console does the same."""

from __future__ import annotations

import ast
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

#: FastGPT's ``QuestionGuidePrompt`` (packages/global/core/ai/prompt/agent.ts)
QUESTION_GUIDE_PROMPT = (
    "You are an AI assistant tasked with predicting the user's next question based on the conversation "
    "history. Your goal is to generate 3 potential questions that will guide the user to continue the "
    "conversation. When generating these questions, adhere to the following rules:\n\n"
    "1. Use the same language as the user's last question in the conversation history.\n"
    "2. Keep each question under 20 characters in length.\n\n"
    "Analyze the conversation history provided to you and use it as context to generate relevant and "
    "engaging follow-up questions. Your predictions should be logical extensions of the current topic or "
    "related areas that the user might be interested in exploring further.\n\n"
    "Remember to maintain consistency in tone and style with the existing conversation while providing "
    "diverse options for the user to choose from. Your goal is to keep the conversation flowing naturally "
    "and help the user delve deeper into the subject matter or explore related topics."
)
#: FastGPT's ``QuestionGuideFooterPrompt``
QUESTION_GUIDE_FOOTER = (
    "Please strictly follow the format rules: \nReturn questions in JSON format: "
    "['Question 1', 'Question 2', 'Question 3']. Your output: "
)
HISTORY_ITEMS = 6  # FastGPT reads the chat's last 6 items
_ROLES = {"Human": "user", "AI": "assistant", "System": "system"}


@dataclass(frozen=True)
class QuestionGuideConfig:
    open: bool
    model: str = ""
    custom_prompt: str = ""


@dataclass(frozen=True)
class QuestionGuide:
    questions: list[str]
    model: str
    input_tokens: int
    output_tokens: int


def question_guide_config(value: Any) -> QuestionGuideConfig:
    """``chatConfig.questionGuide`` (or a request's ``questionGuide``): FastGPT's older boolean or its
    ``{open, model?, customPrompt?}``."""
    if isinstance(value, dict):
        return QuestionGuideConfig(
            open=bool(value.get("open")),
            model=str(value.get("model") or ""),
            custom_prompt=str(value.get("customPrompt") or ""),
        )
    return QuestionGuideConfig(open=bool(value))


def _text(value: Sequence[Any]) -> str:
    parts = []
    for part in value:
        if isinstance(part, dict) and part.get("type") == "text":
            text = part.get("text")
            parts.append(str(text.get("content") if isinstance(text, dict) else text or ""))
    return "\n".join(part for part in parts if part)


def history_messages(items: Sequence[Any]) -> list[dict[str, str]]:
    """Chat items (``obj``, ``value``) as model messages, their text only, oldest first."""
    messages = []
    for item in items:
        role = _ROLES.get(str(getattr(item, "obj", "")))
        text = _text(getattr(item, "value", None) or [])
        if role and text:
            messages.append({"role": role, "content": text})
    return messages


def _parse_questions(answer: str) -> list[str]:
    """The list between the answer's first ``[`` and last ``]`` (JSON, or the single-quoted form FastGPT's
    prompt shows); ``[]`` when there is none."""
    start, end = answer.find("["), answer.rfind("]")
    if start == -1 or end < start:
        return []
    text = answer[start : end + 1].replace("\\n", "").replace("\\", "")
    for reader in (json.loads, ast.literal_eval):
        try:
            value = reader(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        if isinstance(value, list):
            return [str(item).strip() for item in value if str(item).strip()]
    log.warning("question guide answer without a readable list: %.200s", answer)
    return []


async def create_question_guide(
    model: Any, messages: Sequence[dict[str, str]], *, custom_prompt: str = ""
) -> QuestionGuide:
    """Ask ``model`` (``complete(messages)`` → ``content``, ``usage``) for the next questions."""
    prompt = f"{custom_prompt or QUESTION_GUIDE_PROMPT}\n{QUESTION_GUIDE_FOOTER}"
    result = await model.complete([*messages, {"role": "user", "content": prompt}])
    usage = getattr(result, "usage", None)
    config = getattr(model, "config", None)
    return QuestionGuide(
        questions=_parse_questions(str(getattr(result, "content", "") or "")),
        model=str(getattr(config, "id", "") or getattr(model, "model_id", "") or ""),
        input_tokens=int(getattr(usage, "input_tokens", 0) or 0),
        output_tokens=int(getattr(usage, "output_tokens", 0) or 0),
    )
