"""The ``ask_user`` system tool: schema, parser (with legacy payloads) and the resume reply (§3.7.2, §3.9)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

ASK_USER = "ask_user"
BLOCKER_TYPES = ("missing_required_input", "tool_unavailable", "ambiguous_goal", "user_choice")
ASK_WAITING_RESPONSE = "Waiting for user answer."
ASK_INVALID_JSON = "Ask tool arguments are not valid JSON."

ASK_USER_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": ASK_USER,
        "description": (
            "Pause and ask the user when you are blocked: a required input is missing, a tool is "
            "unavailable, the goal is ambiguous, or the user must choose. Ask 1 to 3 questions, each with "
            "2 to 4 options (the user may also type a custom answer, so never add an 'Other' option)."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "reason": {"type": "string", "description": "Why you need the user's input."},
                "blockerType": {"type": "string", "enum": list(BLOCKER_TYPES)},
                "questions": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 3,
                    "items": {
                        "type": "object",
                        "properties": {
                            "question": {"type": "string"},
                            "options": {
                                "type": "array",
                                "minItems": 2,
                                "maxItems": 4,
                                "items": {
                                    "type": "object",
                                    "properties": {
                                        "summary": {"type": "string"},
                                        "value": {"type": "string"},
                                    },
                                    "required": ["summary", "value"],
                                },
                            },
                        },
                        "required": ["question", "options"],
                    },
                },
            },
            "required": ["reason", "blockerType", "questions"],
        },
    },
}


@dataclass(frozen=True)
class AskParse:
    """A parsed ask: ``ask`` (normalised payload) or ``error`` (the reply the model sees)."""

    ask: dict[str, Any] | None = None
    error: str | None = None


def _normalise_legacy(args: dict[str, Any]) -> dict[str, Any] | str:
    options = args.get("options")
    if not isinstance(args.get("question"), str) or not args["question"].strip():
        return "question must be a non-empty string"
    if not isinstance(options, list) or not 2 <= len(options) <= 5:
        return "options must be an array of 2 to 5 strings"
    if not all(isinstance(option, str) and option.strip() for option in options):
        return "options must be an array of 2 to 5 strings"
    return {
        "reason": str(args.get("reason") or args["question"]),
        "blockerType": args.get("blockerType") if args.get("blockerType") in BLOCKER_TYPES else "user_choice",
        "questions": [
            {"question": args["question"], "options": [{"summary": o, "value": o} for o in options]}
        ],
    }


def _check(args: dict[str, Any], max_options: int = 4) -> str | None:
    if not isinstance(args.get("reason"), str) or not args["reason"].strip():
        return "reason must be a non-empty string"
    if args.get("blockerType") not in BLOCKER_TYPES:
        return f"blockerType must be one of {', '.join(BLOCKER_TYPES)}"
    questions = args.get("questions")
    if not isinstance(questions, list) or not 1 <= len(questions) <= 3:
        return "questions must contain 1 to 3 items"
    for qi, question in enumerate(questions):
        if not isinstance(question, dict):
            return f"questions[{qi}] must be an object"
        if not isinstance(question.get("question"), str) or not question["question"].strip():
            return f"questions[{qi}].question must be a non-empty string"
        options = question.get("options")
        if not isinstance(options, list) or not 2 <= len(options) <= max_options:
            return f"questions[{qi}].options must contain 2 to {max_options} items"
        for oi, option in enumerate(options):
            if not isinstance(option, dict) or not all(
                isinstance(option.get(key), str) and option[key].strip() for key in ("summary", "value")
            ):
                return f"questions[{qi}].options[{oi}] must have non-empty summary and value strings"
    return None


def parse_ask_arguments(raw: str | None) -> AskParse:
    """Parse ``ask_user`` arguments; legacy ``{question, options: [str]}`` is normalised first."""
    try:
        args = json.loads(raw) if raw and raw.strip() else {}
    except ValueError:
        return AskParse(error=ASK_INVALID_JSON)
    if not isinstance(args, dict):
        return AskParse(error=ASK_INVALID_JSON)
    max_options = 4
    if "questions" not in args and "question" in args:
        legacy = _normalise_legacy(args)
        if isinstance(legacy, str):
            return AskParse(error=f"Invalid ask_user arguments: {legacy}.")
        args, max_options = legacy, 5
    problem = _check(args, max_options)
    if problem:
        return AskParse(error=f"Invalid ask_user arguments: {problem}.")
    ask = {
        "reason": args["reason"],
        "blockerType": args["blockerType"],
        "questions": [
            {
                "question": q["question"],
                "options": [{"summary": o["summary"], "value": o["value"]} for o in q["options"]],
            }
            for q in args["questions"]
        ],
    }
    return AskParse(ask=ask)


def _answers(answer: str, count: int) -> list[str] | None:
    try:
        data = json.loads(answer)
    except ValueError:
        return None
    if isinstance(data, dict):
        data = data.get("answers", data.get("answer", list(data.values())))
    if isinstance(data, str):
        data = [data]
    if not isinstance(data, list) or not data:
        return None
    texts = [item if isinstance(item, str) else json.dumps(item, ensure_ascii=False) for item in data]
    return (texts + [""] * count)[:count]


def build_ask_answer_text(ask_call: dict[str, Any] | None, answer: str) -> str:
    """The tool reply answering an ask: each question paired with its answer.

    The answer is JSON (a list of answers, one per question, or ``{"answers": [...]}``); when the
    original call cannot be found or parsed, or the answer is not JSON, the raw answer is returned.
    """
    if not ask_call:
        return answer
    parsed = parse_ask_arguments(((ask_call.get("function") or {}).get("arguments")) or "")
    if parsed.ask is None:
        return answer
    questions = [q["question"] for q in parsed.ask["questions"]]
    answers = _answers(answer, len(questions))
    if answers is None:
        if len(questions) == 1:
            answers = [answer]
        else:
            return answer
    return "\n".join(
        f"Q{index}: {question}\nA{index}: {reply}"
        for index, (question, reply) in enumerate(zip(questions, answers, strict=True), start=1)
    )
