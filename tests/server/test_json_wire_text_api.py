"""The JSON text a chat writes on every path, through the HTTP API on SQLite and PostgreSQL: the request to
the model, the stream's frames, the JSON answer and the stored chat items are all FastGPT's compact form
with non-ASCII text kept as it is (not ``\\u`` escapes), and what is stored reads back unchanged."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from live_support import LiveServer, backend_settings, ok, start_live_server
from sqlalchemy import create_engine, text

from fathom.testing import ScriptedOpenAIServer, text_turn

MODEL = "scripted-chat"
QUESTION = "知识库里的「退货政策」是什么？ ✓\u2028🙂"
ANSWER = "七天无理由退货 —— see §3 🙂"
RECORDS = "/api/core/chat/getPaginationRecords"


@dataclass
class World:
    server: LiveServer
    owner: httpx.Client
    scripted: ScriptedOpenAIServer
    app_id: str
    database_url: str


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with ScriptedOpenAIServer() as scripted:
        scripted.set_script(lambda _request: text_turn(ANSWER))
        settings = backend_settings(
            request, tmp_path_factory, "json_text", openai_base_url=scripted.base_url, chat_model=MODEL
        )
        for server in start_live_server(settings):
            with server.client(server.admin_key) as owner:
                body = {"name": "Helpdesk", "type": "simple", "simpleConfig": {"model": MODEL}}
                app_id = str(ok(owner.post("/api/core/app/create", json=body)))
                yield World(server, owner, scripted, app_id, settings.resolved_database_url)


def _ask(world: World, chat_id: str, *, stream: bool) -> httpx.Response:
    body = {
        "appId": world.app_id,
        "chatId": chat_id,
        "stream": stream,
        "detail": True,
        "messages": [{"role": "user", "content": QUESTION}],
    }
    response = world.owner.post("/api/v1/chat/completions", json=body)
    assert response.status_code == 200, response.text
    return response


def test_the_model_is_sent_compact_json_with_the_question_as_utf8(world: World) -> None:
    _ask(world, "to-model", stream=True)
    sent = world.scripted.requests_to("/chat/completions")[-1]
    assert QUESTION.encode() in sent.body
    assert sent.body == json.dumps(sent.json, ensure_ascii=False, separators=(",", ":")).encode()


def test_every_stream_frame_is_compact_json_with_non_ascii_kept(world: World) -> None:
    raw = _ask(world, "streamed", stream=True).text
    frames = [line[len("data: ") :] for line in raw.split("\n") if line.startswith("data: ")]
    payloads = [frame for frame in frames if frame != "[DONE]"]
    assert payloads
    for frame in payloads:
        assert frame == json.dumps(json.loads(frame), ensure_ascii=False, separators=(",", ":"))
    assert (
        "".join(
            choice["delta"].get("content") or ""
            for frame in payloads
            if isinstance(parsed := json.loads(frame), dict)
            for choice in parsed.get("choices") or []
        )
        == ANSWER
    )
    # the node responses (flowResponses) carry the question as it was typed, not as \u escapes
    assert any(QUESTION[:6] in frame for frame in payloads)
    assert "\\u77e5" not in raw


def test_the_json_answer_is_compact_with_non_ascii_kept(world: World) -> None:
    response = _ask(world, "answered", stream=False)
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["choices"][0]["message"]["content"] == ANSWER
    assert response.content == json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


def test_what_is_stored_is_compact_utf8_and_reads_back_unchanged(world: World) -> None:
    _ask(world, "stored", stream=True)
    records = ok(world.owner.post(RECORDS, json={"appId": world.app_id, "chatId": "stored", "pageSize": 10}))
    by_role = {record["obj"]: record for record in records["list"]}
    assert by_role["Human"]["value"][0]["text"]["content"] == QUESTION
    assert by_role["AI"]["value"][0]["text"]["content"] == ANSWER
    url = world.database_url.replace("postgresql://", "postgresql+psycopg://", 1)
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            stored = list(
                connection.execute(
                    text(
                        "SELECT CAST(value AS TEXT) FROM chat_items WHERE app_id = :app AND chat_id = :chat"
                        " UNION ALL SELECT CAST(response_data AS TEXT) FROM chat_items"
                        " WHERE app_id = :app AND chat_id = :chat"
                    ),
                    {"app": world.app_id, "chat": "stored"},
                ).scalars()
            )
    finally:
        engine.dispose()
    assert len(stored) == 4
    assert any(QUESTION in value for value in stored)
    for value in stored:
        assert value == json.dumps(json.loads(value), ensure_ascii=False, separators=(",", ":"))
