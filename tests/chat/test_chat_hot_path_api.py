"""The chat hot path over HTTP: cached key lookup that a revoke ends at once, usage counters written
behind, the turn stored after a stream (the first frame does not wait for it), a new turn stored
while its model works (the write overlaps the model call, it does not wait for the answer), and a
client that drops mid-stream still leaves the turn stored."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from chat_support import ChatServer, answer_text, echo_app_body, parse_sse, simple_app_body

from fathom.testing import ScriptedOpenAIServer, text_turn
from fathom.testing.scripted_openai import RecordedRequest


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def _data(response: Any) -> Any:
    body = response.json()
    assert body["code"] == 200, body
    return body["data"]


def records(chat_server: ChatServer, app_id: str, chat_id: str) -> list[dict[str, Any]]:
    with chat_server.client() as client:
        reply = client.post(
            "/api/core/chat/getPaginationRecords", json={"appId": app_id, "chatId": chat_id, "pageSize": 30}
        ).json()
    items: list[dict[str, Any]] = reply["data"]["list"]
    return items


def record_text(item: dict[str, Any]) -> str:
    return "".join(
        part.get("text", {}).get("content", "") for part in item["value"] if part.get("type") == "text"
    )


def wait_records(chat_server: ChatServer, app_id: str, chat_id: str, count: int) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 20
    while True:
        items = records(chat_server, app_id, chat_id)
        finished = not any(item.get("status") == "running" for item in items)
        if (len(items) >= count and finished) or time.monotonic() > deadline:
            return items
        time.sleep(0.05)


@pytest.fixture(scope="module")
def helper(chat_server: ChatServer) -> str:
    return chat_server.create_app(simple_app_body("HotPath"))


def test_a_revoked_key_fails_on_its_very_next_chat(chat_server: ChatServer, helper: str) -> None:
    with chat_server.client() as admin:
        plain = _data(admin.post("/api/support/openapi/create", json={"name": "short-lived"}))
        key_id = next(
            k["_id"] for k in _data(admin.get("/api/support/openapi/list")) if k["name"] == "short-lived"
        )
    body = {"appId": helper, "messages": [user("hi")]}
    with chat_server.client(plain) as client:
        for _ in range(2):  # the second request is answered from the key cache
            assert client.post("/api/v1/chat/completions", json=body).status_code == 200
        with chat_server.client() as admin:
            assert _data(admin.delete("/api/support/openapi/delete", params={"id": key_id})) is None
        refused = client.post("/api/v1/chat/completions", json=body)
    assert refused.status_code == 401, refused.text
    assert refused.json()["statusText"] == "unAuthApiKey"


def test_key_usage_counters_are_written_behind_and_listed(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer, helper: str
) -> None:
    with chat_server.client() as admin:
        plain = _data(admin.post("/api/support/openapi/create", json={"name": "counted"}))
    scripted.set_script([text_turn("one"), text_turn("two")])
    with chat_server.client(plain) as client:
        for _ in range(2):
            assert (
                client.post(
                    "/api/v1/chat/completions", json={"appId": helper, "messages": [user("x")]}
                ).status_code
                == 200
            )
    with chat_server.client() as admin:  # listing writes the queued counters first
        listed = next(k for k in _data(admin.get("/api/support/openapi/list")) if k["name"] == "counted")
    assert listed["lastUsedTime"] is not None


def test_a_streamed_turn_is_stored_running_from_its_first_frame_and_finished_when_the_stream_ends(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer, helper: str
) -> None:
    full = "y" * 120
    scripted.set_script([text_turn(full, text_chunk_chars=2, delay=0.02)])  # ~1.2 s of streaming
    body = {"appId": helper, "chatId": "hot-stream", "stream": True, "detail": True, "messages": [user("go")]}
    stored_at_first_frame: list[dict[str, Any]] | None = None
    text = ""
    with (
        chat_server.client() as client,
        client.stream("POST", "/api/v1/chat/completions", json=body) as response,
    ):
        for chunk in response.iter_text():
            text += chunk
            if stored_at_first_frame is None and "\n\n" in text:
                stored_at_first_frame = records(chat_server, helper, "hot-stream")
    # the first frame left while the model was still answering: the question and a running answer
    assert stored_at_first_frame is not None
    states = [(i["obj"], i.get("status")) for i in stored_at_first_frame]
    assert states == [("Human", None), ("AI", "running")]
    assert stored_at_first_frame[1]["value"] == [] and stored_at_first_frame[1]["interrupted"] is False
    frames = parse_sse(text)
    assert frames[-1].event == "flowResponses" and answer_text(frames) == full
    items = records(chat_server, helper, "hot-stream")
    assert [item["obj"] for item in items] == ["Human", "AI"]  # the answer replaced, not appended
    assert record_text(items[1]) == full
    assert "status" not in items[1] and "interrupted" not in items[1]


def test_a_new_turn_is_stored_while_its_model_has_not_answered_yet(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer, helper: str
) -> None:
    asked, release = threading.Event(), threading.Event()

    async def held(_: RecordedRequest) -> Any:  # no byte of the answer until the test lets it go
        asked.set()
        await asyncio.to_thread(release.wait, 60)
        return text_turn("held answer")

    scripted.set_script(held)
    body = {"appId": helper, "chatId": "hot-held", "stream": True, "messages": [user("wait")]}
    replies: list[str] = []

    def send() -> None:
        with chat_server.client() as client:
            replies.append(client.post("/api/v1/chat/completions", json=body).text)

    sender = threading.Thread(target=send)
    sender.start()
    try:
        assert asked.wait(30), "the model was never asked"
        deadline = time.monotonic() + 20
        while len(items := records(chat_server, helper, "hot-held")) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        # the model holds its answer: the question and a running answer are stored all the same
        assert [(i["obj"], i.get("status")) for i in items] == [("Human", None), ("AI", "running")]
        assert replies == []  # the request is still open
    finally:
        release.set()
        sender.join(60)
    assert answer_text(parse_sse(replies[0])) == "held answer"
    items = wait_records(chat_server, helper, "hot-held", 2)
    assert record_text(items[1]) == "held answer" and "status" not in items[1]


def test_a_client_that_drops_mid_stream_still_leaves_the_turn_stored(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer, helper: str
) -> None:
    full = "z" * 100
    scripted.set_script([text_turn(full, text_chunk_chars=2, delay=0.02)])
    body = {"appId": helper, "chatId": "hot-drop", "stream": True, "detail": True, "messages": [user("go")]}
    seen = ""
    with (
        chat_server.client() as client,
        client.stream("POST", "/api/v1/chat/completions", json=body) as response,
    ):
        for chunk in response.iter_text():
            seen += chunk
            if seen.count("\n\n") >= 4:
                break  # the client goes away mid-answer
    assert "[DONE]" not in seen
    items = wait_records(chat_server, helper, "hot-drop", 2)
    assert [item["obj"] for item in items] == ["Human", "AI"]
    # the run goes on without the client (a reconnect may resume it), so the whole answer is kept
    assert record_text(items[1]) == full


def test_a_no_model_app_streams_and_stores_its_turn(chat_server: ChatServer) -> None:
    app = chat_server.create_app(echo_app_body("hot-answer"))
    with chat_server.client() as client:
        for turn in ("one", "two"):
            body = {"appId": app, "chatId": "hot-answer", "stream": True, "messages": [user(turn)]}
            frames = parse_sse(client.post("/api/v1/chat/completions", json=body).text)
            assert answer_text(frames).strip() == f"You said: {turn}"
    items = records(chat_server, app, "hot-answer")
    assert [(item["obj"], record_text(item).strip()) for item in items] == [
        ("Human", "one"),
        ("AI", "You said: one"),
        ("Human", "two"),
        ("AI", "You said: two"),
    ]
