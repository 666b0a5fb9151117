"""Suggested next questions (FastGPT's ``createQuestionGuide``) through the HTTP API with the scripted
model: the chat's last items and FastGPT's prompt go to the app's model, the questions it writes come
back as ``data``, the app's ``chatConfig.questionGuide`` shows in ``chat/init``, and the older
``{messages}`` form answers the same way. With the guide on, every answer also brings them (Fathom's
extension): a ``questionGuide`` event before ``[DONE]`` in a detailed stream, a ``questionGuide`` field in
a non-stream answer; a plain OpenAI stream stays as it was, and a failing model costs the answer nothing.
On SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from chat_support import (
    MODEL,
    ChatServer,
    answer_text,
    parse_sse,
    simple_app_body,
)

from fathom.chat.question_guide import QUESTION_GUIDE_FOOTER, QUESTION_GUIDE_PROMPT
from fathom.testing import ScriptedOpenAIServer, Turn, text_turn

GUIDE = "/api/core/ai/agent/v2/createQuestionGuide"


@pytest.fixture(scope="module")
def chat_server(chat_server_each_backend: ChatServer) -> ChatServer:
    return chat_server_each_backend


def ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["code"] == 200 and body["statusText"] == "" and body["message"] == "", body
    return body["data"]


def chatted(client: httpx.Client, app_id: str, chat_id: str, question: str) -> dict[str, Any]:
    body = {
        "appId": app_id,
        "chatId": chat_id,
        "stream": False,
        "messages": [{"role": "user", "content": question}],
    }
    response = client.post("/api/v1/chat/completions", json=body)
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_three_questions_come_from_the_apps_model_with_fastgpts_prompt(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    with chat_server.client() as client:
        app_id = ok(
            client.post("/api/core/app/create", json=simple_app_body("Guided", questionGuide={"open": True}))
        )
        init = ok(client.get("/api/core/chat/init", params={"appId": app_id, "chatId": "guide-1"}))
        assert init["app"]["chatConfig"]["questionGuide"] == {"open": True}
        scripted.set_script(
            [
                text_turn("Refunds take five working days."),
                text_turn('["Can I get cash?", "Which card?", "Any fees?"]'),  # with the answer
                text_turn("Here you go: ['How do I apply?', 'Which card?', 'Any fees?']"),
            ]
        )
        answer = chatted(client, app_id, "guide-1", "How long do refunds take?")
        assert answer["questionGuide"] == ["Can I get cash?", "Which card?", "Any fees?"]
        scripted.clear()
        questions = ok(client.post(GUIDE, json={"appId": app_id, "chatId": "guide-1"}))
        assert questions == ["How do I apply?", "Which card?", "Any fees?"]
        [request] = scripted.chat_requests
        assert request["model"] == MODEL
        messages = request["messages"]
        assert messages[-1] == {
            "role": "user",
            "content": f"{QUESTION_GUIDE_PROMPT}\n{QUESTION_GUIDE_FOOTER}",
        }
        assert messages[:-1] == [
            {"role": "user", "content": "How long do refunds take?"},
            {"role": "assistant", "content": "Refunds take five working days."},
        ]


def test_a_custom_prompt_replaces_fastgpts_and_an_answer_without_a_list_gives_none(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    with chat_server.client() as client:
        app_id = ok(client.post("/api/core/app/create", json=simple_app_body("Guided 2")))
        scripted.set_script([text_turn("Parcels arrive in three days."), text_turn("no idea")])
        chatted(client, app_id, "guide-2", "When do parcels arrive?")
        scripted.clear()
        setting = {"open": True, "customPrompt": "Suggest shipping questions."}
        assert (
            ok(client.post(GUIDE, json={"appId": app_id, "chatId": "guide-2", "questionGuide": setting}))
            == []
        )
        assert scripted.chat_requests[0]["messages"][-1]["content"].startswith(
            "Suggest shipping questions.\n"
        )


def test_a_chat_with_no_items_gives_no_questions_and_bad_bodies_name_the_field(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    with chat_server.client() as client:
        app_id = ok(client.post("/api/core/app/create", json=simple_app_body("Guided 3")))
        scripted.clear()
        assert ok(client.post(GUIDE, json={"appId": app_id, "chatId": "never-used"})) == []
        assert scripted.chat_requests == []
        missing = client.post(GUIDE, json={"appId": app_id})
        assert missing.status_code == 400 and missing.json()["statusText"] == "missingParams"
        assert missing.json()["message"].startswith("chatId")
        bad = client.post("/api/core/app/create", json=simple_app_body("Bad", questionGuide="yes"))
        assert bad.status_code == 400 and "config.questionGuide" in bad.json()["message"]


def test_the_older_messages_form_answers_the_same_way(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    with chat_server.client() as client:
        scripted.set_script([text_turn('["Is it free?", "How fast?", "Where?"]')])
        messages = [
            {"role": "user", "content": "Do you ship?"},
            {"role": "assistant", "content": "Yes, EU-wide."},
        ]
        body = {"messages": messages}
        assert ok(client.post("/api/core/ai/agent/createQuestionGuide", json=body)) == [
            "Is it free?",
            "How fast?",
            "Where?",
        ]


def streamed(client: httpx.Client, app_id: str, chat_id: str, *, detail: bool) -> list[Any]:
    body = {
        "appId": app_id,
        "chatId": chat_id,
        "stream": True,
        "detail": detail,
        "messages": [{"role": "user", "content": "How long do refunds take?"}],
    }
    response = client.post("/api/v2/chat/completions", json=body)
    assert response.status_code == 200, response.text
    return parse_sse(response.text)


def test_a_detailed_stream_carries_the_questions_before_done_and_records_their_usage(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    with chat_server.client() as client:
        app_id = ok(
            client.post(
                "/api/core/app/create", json=simple_app_body("Streamed", questionGuide={"open": True})
            )
        )
        scripted.set_script(
            [
                text_turn("Five working days.", usage=(10, 3)),
                text_turn('["Which card?", "Any fees?", "Can I track it?"]', usage=(100, 7)),
            ]
        )
        frames = streamed(client, app_id, "guide-stream", detail=True)
        assert answer_text(frames) == "Five working days."
        events = [frame.event for frame in frames]
        guide = events.index("questionGuide")
        assert frames[guide].json() == ["Which card?", "Any fees?", "Can I track it?"]
        done = next(i for i, frame in enumerate(frames) if frame.data == "[DONE]")
        assert guide < done
        assert frames[guide + 1].json()["choices"][0]["finish_reason"] == "stop"
        # the app's model was asked with the turn just answered and FastGPT's prompt
        asked = scripted.chat_requests[-1]
        assert asked["model"] == MODEL
        assert asked["messages"] == [
            {"role": "user", "content": "How long do refunds take?"},
            {"role": "assistant", "content": "Five working days."},
            {"role": "user", "content": f"{QUESTION_GUIDE_PROMPT}\n{QUESTION_GUIDE_FOOTER}"},
        ]
        usage = ok(client.get("/api/support/usage/summary", params={"appId": app_id}))
        assert usage["total"]["inputTokens"] == 110 and usage["total"]["outputTokens"] == 10
        assert usage["total"]["records"] == 2


def test_a_plain_stream_stays_openai_chunks_and_asks_no_questions(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    with chat_server.client() as client:
        app_id = ok(
            client.post("/api/core/app/create", json=simple_app_body("Plain", questionGuide={"open": True}))
        )
        scripted.set_script([text_turn("Five working days.")])
        scripted.clear()
        frames = streamed(client, app_id, "guide-plain", detail=False)
        assert all(frame.event is None for frame in frames)
        assert frames[-1].data == "[DONE]"
        assert all("choices" in frame.json() for frame in frames[:-1])
        assert len(scripted.chat_requests) == 1  # the answer only


def test_a_failing_guide_model_leaves_the_answer_whole_and_an_app_without_the_guide_asks_nothing(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    with chat_server.client() as client:
        guided = ok(
            client.post("/api/core/app/create", json=simple_app_body("Failing", questionGuide={"open": True}))
        )
        scripted.set_script([text_turn("Five working days."), Turn(status=400, error="no such request")])
        scripted.clear()
        frames = streamed(client, guided, "guide-failing", detail=True)
        assert answer_text(frames) == "Five working days."
        assert "questionGuide" not in [frame.event for frame in frames] and "error" not in [
            frame.event for frame in frames
        ]
        assert any(frame.data == "[DONE]" for frame in frames)
        assert len(scripted.chat_requests) == 2
        scripted.set_script([text_turn("Still five days."), Turn(status=400, error="no such request")])
        answer = chatted(client, guided, "guide-failing", "And now?")
        assert answer["choices"][0]["message"]["content"] == "Still five days."
        assert "questionGuide" not in answer

        plain = ok(client.post("/api/core/app/create", json=simple_app_body("Unguided")))
        scripted.clear()
        scripted.set_script([text_turn("Five working days."), text_turn("Still five.")])
        answer = chatted(client, plain, "guide-off", "How long?")
        assert "questionGuide" not in answer
        frames = streamed(client, plain, "guide-off", detail=True)
        assert "questionGuide" not in [frame.event for frame in frames]
        assert len(scripted.chat_requests) == 2  # the two answers, no questions
