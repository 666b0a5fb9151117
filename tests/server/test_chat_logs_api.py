"""Chat logs through the HTTP API, on SQLite and PostgreSQL (issue 19, item 4): every conversation of an
app from every channel (the console's ``online``, keys' ``api``, a share link's ``share``, the editor's
``test``), filtered by
channel, date, title and feedback; visitors' feedback with a comment; the owner's mark with a corrected
answer; the CSV export; and only those who manage the app may read any of it."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from live_support import LiveServer, backend_settings, ok, start_live_server

from fathom.testing import ScriptedOpenAIServer, text_turn

MODEL = "scripted-chat"
LOGS = "/api/core/app/getChatLogs"
EXPORT = "/api/core/app/exportChatLogs"
USER_FEEDBACK = "/api/core/chat/feedback/updateUserFeedback"
ADMIN_FEEDBACK = "/api/core/chat/feedback/adminUpdate"
RECORDS = "/api/core/chat/getPaginationRecords"
TRICKY_TITLE = 'Totals, "net", gross'
FORMULA_TITLE = "=HYPERLINK(1)"


@dataclass
class Logs:
    server: LiveServer
    owner: httpx.Client  # the owner's team-wide key
    console: httpx.Client  # root signed in by password (a console session)
    app_id: str
    answers: dict[str, str]  # chatId -> the dataId of its first answer


def _chat(client: httpx.Client, path: str, app_id: str, chat_id: str, text: str) -> None:
    body = {"appId": app_id, "chatId": chat_id, "messages": [{"role": "user", "content": text}]}
    response = client.post(path, json=body)
    assert response.status_code == 200, response.text


def _first_answer(client: httpx.Client, app_id: str, chat_id: str) -> str:
    records = ok(client.post(RECORDS, json={"appId": app_id, "chatId": chat_id, "pageSize": 50}))["list"]
    return str(next(r["dataId"] for r in records if r["obj"] == "AI"))


@pytest.fixture(scope="module")
def scripted() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as server:
        server.set_script(lambda request: text_turn("the answer"))
        yield server


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def logs(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, scripted: ScriptedOpenAIServer
) -> Iterator[Logs]:
    settings = backend_settings(
        request, tmp_path_factory, "chat_logs", openai_base_url=scripted.base_url, chat_model=MODEL
    )
    for server in start_live_server(settings):
        with server.client(server.admin_key) as owner, server.client() as console:
            assert server.boot.root_password
            signed = ok(
                console.post(
                    "/api/support/user/account/loginByPassword",
                    json={"username": "root", "password": server.boot.root_password},
                )
            )
            console.headers["X-CSRF-Token"] = signed["csrfToken"]
            body = {"name": "Helpdesk", "type": "simple", "simpleConfig": {"model": MODEL}}
            app_id = str(ok(owner.post("/api/core/app/create", json=body)))
            _chat(owner, "/api/v1/chat/completions", app_id, "api-chat", TRICKY_TITLE)
            _chat(owner, "/api/v1/chat/completions", app_id, "api-chat", "and the second question")
            _chat(console, "/api/v2/chat/completions", app_id, "console-chat", FORMULA_TITLE)
            _chat(owner, "/api/core/chat/chatTest", app_id, "test-chat", "a debug run")
            link = {"appId": app_id, "type": "share", "name": "Website"}
            share_id = ok(owner.post("/api/support/outLink/create", json=link))
            with server.client() as visitor:  # no key, no session: a visitor of the share link
                asked = {
                    "shareId": share_id,
                    "outLinkUid": "visitor-7",
                    "chatId": "share-chat",
                    "messages": [{"role": "user", "content": "from the website"}],
                }
                assert visitor.post("/api/v1/chat/completions", json=asked).status_code == 200
            answers = {c: _first_answer(owner, app_id, c) for c in ("api-chat", "console-chat", "test-chat")}
            ok(
                console.post(
                    USER_FEEDBACK,
                    json={
                        "appId": app_id,
                        "chatId": "console-chat",
                        "dataId": answers["console-chat"],
                        "userBadFeedback": "wrong total, it is 42",
                    },
                )
            )
            ok(
                owner.post(
                    USER_FEEDBACK,
                    json={
                        "appId": app_id,
                        "chatId": "api-chat",
                        "dataId": answers["api-chat"],
                        "userGoodFeedback": "yes",
                    },
                )
            )
            yield Logs(server, owner, console, app_id, answers)


def listed(logs: Logs, **filters: Any) -> list[dict[str, Any]]:
    data = ok(logs.owner.post(LOGS, json={"appId": logs.app_id, "pageSize": 50, **filters}))
    assert data["total"] == len(data["list"])
    return list(data["list"])


def chat_ids(logs: Logs, **filters: Any) -> set[str]:
    return {entry["chatId"] for entry in listed(logs, **filters)}


def test_every_channel_is_logged_and_console_chats_are_online(logs: Logs) -> None:
    by_id = {entry["chatId"]: entry for entry in listed(logs)}
    assert {c: e["source"] for c, e in by_id.items()} == {
        "api-chat": "api",
        "console-chat": "online",
        "share-chat": "share",
        "test-chat": "test",
    }
    assert by_id["share-chat"]["outLinkUid"] == "visitor-7"
    api_chat = by_id["api-chat"]
    assert api_chat["title"] == TRICKY_TITLE
    assert (
        api_chat["messageCount"],
        api_chat["userGoodFeedbackCount"],
        api_chat["userBadFeedbackCount"],
    ) == (
        4,
        1,
        0,
    )
    assert by_id["console-chat"]["userBadFeedbackCount"] == 1
    assert {"updateTime", "createTime", "markCount", "tmbId", "averageResponseTime"} <= set(api_chat)


def test_logs_filter_by_channel(logs: Logs) -> None:
    assert chat_ids(logs, sources=["online"]) == {"console-chat"}
    assert chat_ids(logs, sources=["api", "test"]) == {"api-chat", "test-chat"}
    assert chat_ids(logs, sources=["share"]) == {"share-chat"}
    assert chat_ids(logs, sources=["feishu"]) == set()
    as_query = ok(logs.owner.get(LOGS, params={"appId": logs.app_id, "sources": "online,api"}))
    assert {e["chatId"] for e in as_query["list"]} == {"console-chat", "api-chat"}


def test_logs_filter_by_date(logs: Logs) -> None:
    now = datetime.now(UTC)
    hour = timedelta(hours=1)
    assert len(chat_ids(logs, dateStart=(now - hour).isoformat(), dateEnd=(now + hour).isoformat())) == 4
    assert chat_ids(logs, dateStart=(now + hour).isoformat(), dateEnd=(now + 2 * hour).isoformat()) == set()
    assert (
        chat_ids(logs, dateStart=(now - 30 * hour).isoformat(), dateEnd=(now - 20 * hour).isoformat())
        == set()
    )
    refused = logs.owner.post(
        LOGS, json={"appId": logs.app_id, "dateStart": now.isoformat(), "dateEnd": (now - hour).isoformat()}
    )
    assert refused.status_code == 400
    assert refused.json()["message"].startswith("dateStart:")


def test_logs_filter_by_title_and_paginate(logs: Logs) -> None:
    assert chat_ids(logs, chatSearch='"net"') == {"api-chat"}
    assert chat_ids(logs, chatSearch="100%") == set()  # % is a character, not a wildcard
    first = ok(logs.owner.post(LOGS, json={"appId": logs.app_id, "pageSize": 3}))
    second = ok(logs.owner.post(LOGS, json={"appId": logs.app_id, "pageSize": 3, "pageNum": 2}))
    assert first["total"] == second["total"] == 4
    assert len(first["list"]) == 3 and len(second["list"]) == 1
    every = {"api-chat", "console-chat", "test-chat", "share-chat"}
    assert {e["chatId"] for e in first["list"] + second["list"]} == every


def test_logs_filter_by_feedback(logs: Logs) -> None:
    assert chat_ids(logs, feedbackType="bad") == {"console-chat"}
    assert chat_ids(logs, feedbackType="good") == {"api-chat"}
    assert chat_ids(logs, feedbackType="has_feedback") == {"api-chat", "console-chat"}
    assert len(chat_ids(logs, feedbackType="all")) == 4


def test_user_feedback_carries_its_comment_and_bad_input_names_the_field(logs: Logs) -> None:
    records = ok(logs.console.post(RECORDS, json={"appId": logs.app_id, "chatId": "console-chat"}))["list"]
    answer = next(r for r in records if r["obj"] == "AI")
    assert answer["userBadFeedback"] == "wrong total, it is 42"
    too_long = logs.owner.post(
        USER_FEEDBACK,
        json={
            "appId": logs.app_id,
            "chatId": "test-chat",
            "dataId": logs.answers["test-chat"],
            "userBadFeedback": "x" * 5001,
        },
    )
    assert too_long.status_code == 400
    assert too_long.json()["message"].startswith("userBadFeedback:")
    for bad in ({"sources": ["nowhere"]}, {"feedbackType": "meh"}, {"dateStart": "yesterday"}):
        response = logs.owner.post(LOGS, json={"appId": logs.app_id, **bad})
        assert response.status_code == 400, response.text
        assert response.json()["message"].startswith(next(iter(bad))), response.text


def test_the_owner_marks_an_answer_with_a_corrected_one(logs: Logs) -> None:
    mark = {
        "appId": logs.app_id,
        "chatId": "test-chat",
        "dataId": logs.answers["test-chat"],
        "q": "a debug run",
        "a": "the corrected answer",
    }
    ok(logs.owner.post(ADMIN_FEEDBACK, json=mark))
    assert chat_ids(logs, feedbackType="marked") == {"test-chat"}
    assert next(e for e in listed(logs) if e["chatId"] == "test-chat")["markCount"] == 1
    records = ok(logs.owner.post(RECORDS, json={"appId": logs.app_id, "chatId": "test-chat"}))["list"]
    answer = next(r for r in records if r["obj"] == "AI")
    assert answer["adminFeedback"] == {"q": "a debug run", "a": "the corrected answer"}
    # the older form: chatItemId names the answer, dataId the knowledge-base record it went into
    legacy = {**mark, "dataId": "f" * 24, "chatItemId": logs.answers["test-chat"], "datasetId": "e" * 24}
    ok(logs.console.post("/api/core/chat/feedback/updateAdminFeedback", json={**legacy, "a": "better"}))
    records = ok(logs.owner.post(RECORDS, json={"appId": logs.app_id, "chatId": "test-chat"}))["list"]
    assert next(r for r in records if r["obj"] == "AI")["adminFeedback"] == {
        "q": "a debug run",
        "a": "better",
        "datasetId": "e" * 24,
        "feedbackDataId": "f" * 24,
    }
    missing_q = logs.owner.post(ADMIN_FEEDBACK, json={**mark, "q": ""})
    assert missing_q.status_code == 400 and missing_q.json()["message"].startswith("q:")
    unknown = logs.owner.post(ADMIN_FEEDBACK, json={**mark, "dataId": "no-such-answer"})
    assert unknown.status_code == 404, unknown.text


def export(logs: Logs, **filters: Any) -> list[list[str]]:
    response = logs.owner.post(EXPORT, json={"appId": logs.app_id, **filters})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/csv")
    assert "attachment" in response.headers["content-disposition"]
    return list(csv.reader(io.StringIO(response.content.decode("utf-8-sig"), newline="")))


def test_csv_export_has_a_header_and_one_escaped_row_per_conversation(logs: Logs) -> None:
    rows = export(logs, sourcesMap={"online": {"label": "Console"}})
    header, body = rows[0], rows[1:]
    assert header[:7] == ["Time", "Created", "Source", "Title", "Chat ID", "Member", "Messages"]
    assert len(body) == 4
    by_id = {row[header.index("Chat ID")]: dict(zip(header, row, strict=True)) for row in body}
    assert by_id["api-chat"]["Title"] == TRICKY_TITLE  # commas and quotes survive the round trip
    assert by_id["api-chat"]["Messages"] == "4"
    assert by_id["api-chat"]["Good feedback"] == "1"
    assert by_id["console-chat"]["Source"] == "Console"
    assert by_id["console-chat"]["Title"] == "'" + FORMULA_TITLE  # a spreadsheet will not run it
    assert "bad: wrong total, it is 42" in by_id["console-chat"]["Feedback"]
    assert by_id["api-chat"]["Source"] == "api"
    assert (by_id["share-chat"]["Source"], by_id["share-chat"]["Member"]) == ("share", "visitor-7")
    only_bad = export(logs, feedbackType="bad")
    assert [row[4] for row in only_bad[1:]] == ["console-chat"]


def test_only_members_who_manage_the_app_see_its_logs(logs: Logs) -> None:
    link = ok(logs.owner.post("/api/support/user/team/invitation/create", json={"role": "member"}))["token"]
    with logs.server.client() as member:
        joined = ok(
            member.post(
                "/api/support/user/team/invitation/accept",
                json={"token": link, "username": "reader", "password": "correct horse"},
            )
        )
        member.headers["X-CSRF-Token"] = joined["csrfToken"]
        grant = {"appId": logs.app_id, "tmbIds": [joined["user"]["tmbId"]], "permission": "write"}
        ok(logs.owner.post("/api/core/app/collaborator/update", json=grant))
        _chat(member, "/api/v1/chat/completions", logs.app_id, "member-chat", "may I?")  # write: chats
        mark = {"appId": logs.app_id, "chatId": "member-chat", "dataId": "x", "q": "q", "a": "a"}
        for path, body in (
            (LOGS, {"appId": logs.app_id}),
            (EXPORT, {"appId": logs.app_id}),
            (ADMIN_FEEDBACK, mark),
        ):
            refused = member.post(path, json=body)
            assert refused.status_code == 403, (path, refused.text)
            assert refused.json()["statusText"] == "unAuthApp"
    assert "member-chat" in chat_ids(logs, sources=["online"])
