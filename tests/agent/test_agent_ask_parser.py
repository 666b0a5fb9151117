"""ask_user parsing (spec §3.7.2): schema errors as replies, legacy payloads, the resume reply."""

from __future__ import annotations

import json

import pytest

from fathom.agent.system_tools import ASK_USER_SCHEMA, build_ask_answer_text, parse_ask_arguments

OPTIONS = [{"summary": "Yes", "value": "y"}, {"summary": "No", "value": "n"}]


def ask(**overrides: object) -> str:
    payload: dict[str, object] = {
        "reason": "r",
        "blockerType": "ambiguous_goal",
        "questions": [{"question": "Go?", "options": OPTIONS}],
    }
    payload.update(overrides)
    return json.dumps(payload)


def test_schema_has_the_spec_limits() -> None:
    params = ASK_USER_SCHEMA["function"]["parameters"]
    questions = params["properties"]["questions"]
    assert (questions["minItems"], questions["maxItems"]) == (1, 3)
    options = questions["items"]["properties"]["options"]
    assert (options["minItems"], options["maxItems"]) == (2, 4)
    assert params["properties"]["blockerType"]["enum"] == [
        "missing_required_input",
        "tool_unavailable",
        "ambiguous_goal",
        "user_choice",
    ]


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        ("{oops", "Ask tool arguments are not valid JSON."),
        ("[1]", "Ask tool arguments are not valid JSON."),
        (
            ask(blockerType="other"),
            "Invalid ask_user arguments: blockerType must be one of missing_required_input, "
            "tool_unavailable, ambiguous_goal, user_choice.",
        ),
        (ask(questions=[]), "Invalid ask_user arguments: questions must contain 1 to 3 items."),
        (
            ask(questions=[{"question": "q", "options": OPTIONS}] * 4),
            "Invalid ask_user arguments: questions must contain 1 to 3 items.",
        ),
        (
            ask(questions=[{"question": "q", "options": OPTIONS[:1]}]),
            "Invalid ask_user arguments: questions[0].options must contain 2 to 4 items.",
        ),
        (
            ask(questions=[{"question": "q", "options": OPTIONS * 3}]),
            "Invalid ask_user arguments: questions[0].options must contain 2 to 4 items.",
        ),
        (
            json.dumps({"question": "q", "options": ["a"]}),
            "Invalid ask_user arguments: options must be an array of 2 to 5 strings.",
        ),
    ],
)
def test_invalid_asks_become_replies(raw: str, error: str) -> None:
    parsed = parse_ask_arguments(raw)
    assert (parsed.ask, parsed.error) == (None, error)


def test_legacy_payload_is_one_question_with_summary_equal_value() -> None:
    parsed = parse_ask_arguments(json.dumps({"question": "Pick", "options": ["a", "b", "c", "d", "e"]}))
    assert parsed.ask == {
        "reason": "Pick",
        "blockerType": "user_choice",
        "questions": [{"question": "Pick", "options": [{"summary": o, "value": o} for o in "abcde"]}],
    }


def call(arguments: str) -> dict[str, object]:
    return {"id": "c1", "type": "function", "function": {"name": "ask_user", "arguments": arguments}}


@pytest.mark.parametrize(
    ("arguments", "answer", "text"),
    [
        (ask(), '["y"]', "Q1: Go?\nA1: y"),
        (ask(), '{"answers": ["n"]}', "Q1: Go?\nA1: n"),
        (ask(), "just do it", "Q1: Go?\nA1: just do it"),
        (
            ask(questions=[{"question": "A?", "options": OPTIONS}, {"question": "B?", "options": OPTIONS}]),
            '["y", "n"]',
            "Q1: A?\nA1: y\nQ2: B?\nA2: n",
        ),
        (
            ask(questions=[{"question": "A?", "options": OPTIONS}, {"question": "B?", "options": OPTIONS}]),
            "free text",
            "free text",
        ),
        ("{broken", '["y"]', '["y"]'),
    ],
)
def test_resume_reply_pairs_questions_and_answers(arguments: str, answer: str, text: str) -> None:
    assert build_ask_answer_text(call(arguments), answer) == text


def test_resume_reply_without_the_call_is_the_raw_answer() -> None:
    assert build_ask_answer_text(None, "raw") == "raw"
