"""A turn whose run ends before its first write has begun (a workflow without a model) is stored in one
write, question and finished answer inserted together; a turn that waits on its model is stored
running at its start and finished at its end, as before; a one-write turn the database refuses leaves
nothing stored and the client an error, as a refused first write did. Both backends, through HTTP; the
writes are watched by triggers on ``chat_items`` in the test's own database."""

from __future__ import annotations

from typing import Any

import pytest
from chat_support import ChatServer, answer_text, echo_app_body, parse_sse, simple_app_body
from sqlalchemy import text

from fathom.platform import Platform
from fathom.testing import ScriptedOpenAIServer, text_turn

REFUSED_CHAT = "refused-by-the-database"

SQLITE_WATCH = [
    "CREATE TABLE item_writes (op TEXT, chat_id TEXT, obj TEXT, status TEXT)",
    "CREATE TRIGGER item_inserted AFTER INSERT ON chat_items BEGIN "
    "INSERT INTO item_writes VALUES ('insert', NEW.chat_id, NEW.obj, NEW.status); END",
    "CREATE TRIGGER item_updated AFTER UPDATE ON chat_items BEGIN "
    "INSERT INTO item_writes VALUES ('update', NEW.chat_id, NEW.obj, NEW.status); END",
    f"CREATE TRIGGER item_refused BEFORE INSERT ON chat_items WHEN NEW.chat_id = '{REFUSED_CHAT}' "
    "BEGIN SELECT RAISE(ABORT, 'refused by the test'); END",
]
POSTGRES_WATCH = [
    "CREATE TABLE item_writes (op TEXT, chat_id TEXT, obj TEXT, status TEXT)",
    "CREATE FUNCTION log_item_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
    f"IF NEW.chat_id = '{REFUSED_CHAT}' THEN RAISE EXCEPTION 'refused by the test'; END IF; "
    "INSERT INTO item_writes VALUES (lower(TG_OP), NEW.chat_id, NEW.obj, NEW.status); RETURN NEW; END $$",
    "CREATE TRIGGER item_written AFTER INSERT OR UPDATE ON chat_items "
    "FOR EACH ROW EXECUTE FUNCTION log_item_write()",
]


@pytest.fixture(scope="module")
def watched(chat_server_each_backend: ChatServer) -> ChatServer:
    server = chat_server_each_backend

    async def watch(platform: Platform) -> None:
        statements = SQLITE_WATCH if platform.db.dialect == "sqlite" else POSTGRES_WATCH

        def run(conn: Any) -> None:
            for statement in statements:
                conn.execute(text(statement))

        await platform.db.run_write(run)

    server.run(watch)
    return server


def writes(server: ChatServer, chat_id: str) -> list[tuple[str, str, str | None]]:
    async def read(platform: Platform) -> list[tuple[str, str, str | None]]:
        query = text("SELECT op, obj, status FROM item_writes WHERE chat_id = :chat")
        rows = await platform.db.run_read(lambda conn: conn.execute(query, {"chat": chat_id}).all())
        return [(row.op, row.obj, row.status) for row in rows]

    return list(server.run(read))


def stored(server: ChatServer, app_id: str, chat_id: str) -> list[tuple[str, str | None, str]]:
    with server.client() as client:
        reply = client.post(
            "/api/core/chat/getPaginationRecords", json={"appId": app_id, "chatId": chat_id, "pageSize": 30}
        ).json()
    assert reply["code"] == 200, reply
    return [
        (
            item["obj"],
            item.get("status"),
            "".join(
                p.get("text", {}).get("content", "") for p in item["value"] if p.get("type") == "text"
            ).strip(),
        )
        for item in reply["data"]["list"]
    ]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_a_run_without_a_model_stores_its_turn_finished_in_one_write(
    watched: ChatServer, stream: bool
) -> None:
    app_id = watched.create_app(echo_app_body())
    chat_id = f"one-write-{'sse' if stream else 'json'}"
    for turn in ("one", "two"):  # a new chat, then a continued one
        body = {
            "appId": app_id,
            "chatId": chat_id,
            "stream": stream,
            "messages": [{"role": "user", "content": turn}],
        }
        with watched.client() as client:
            response = client.post("/api/v1/chat/completions", json=body)
        assert response.status_code == 200, response.text
        answer = (
            answer_text(parse_sse(response.text))
            if stream
            else response.json()["choices"][0]["message"]["content"]
        )
        assert answer.strip() == f"You said: {turn}"
    # inserted finished, never inserted running and updated after
    assert writes(watched, chat_id) == [("insert", "Human", None), ("insert", "AI", None)] * 2
    assert stored(watched, app_id, chat_id) == [
        ("Human", None, "one"),
        ("AI", None, "You said: one"),
        ("Human", None, "two"),
        ("AI", None, "You said: two"),
    ]


def test_a_run_that_waits_on_its_model_is_stored_running_then_finished(
    watched: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    app_id = watched.create_app(simple_app_body("Model app"))
    scripted.set_script([text_turn("Hello there.")])
    body = {"appId": app_id, "chatId": "two-writes", "messages": [{"role": "user", "content": "hi"}]}
    with watched.client() as client:
        response = client.post("/api/v1/chat/completions", json=body)
    assert response.status_code == 200, response.text
    assert writes(watched, "two-writes") == [
        ("insert", "Human", None),
        ("insert", "AI", "running"),
        ("update", "AI", None),
    ]
    assert stored(watched, app_id, "two-writes") == [("Human", None, "hi"), ("AI", None, "Hello there.")]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_a_one_write_turn_the_database_refuses_stores_nothing_and_answers_an_error(
    watched: ChatServer, stream: bool
) -> None:
    app_id = watched.create_app(echo_app_body())
    body = {
        "appId": app_id,
        "chatId": REFUSED_CHAT,
        "stream": stream,
        "messages": [{"role": "user", "content": "lost?"}],
    }
    with watched.client() as client:
        response = client.post("/api/v1/chat/completions", json=body)
        assert response.status_code >= 500, response.text
        assert "You said" not in response.text  # no part of the answer left before the write
        assert "refused by the test" not in response.text  # no database text reaches the client
        histories = client.post("/api/core/chat/getHistories", json={"appId": app_id}).json()
    assert histories["code"] == 200, histories
    assert [chat["chatId"] for chat in histories["data"]["list"]] == []  # the chat row went with the items
    assert writes(watched, REFUSED_CHAT) == []
