"""Chat history and record CRUD over FastGPT's paths (and their newer aliases)."""

from __future__ import annotations

from typing import Any

import pytest
from chat_support import ChatServer, simple_app_body

from fathom.platform import Platform
from fathom.testing import ScriptedOpenAIServer, text_turn


@pytest.fixture(scope="module")
def app_id(chat_server: ChatServer, scripted: ScriptedOpenAIServer) -> str:
    app = chat_server.create_app(simple_app_body("History"))
    scripted.set_script(lambda request: text_turn(f"answer {len(scripted.chat_requests)}"))
    with chat_server.client() as client:
        for chat_id, question in [("h1", "first question"), ("h2", "second question"), ("h2", "again")]:
            body = {"appId": app, "chatId": chat_id, "messages": [{"role": "user", "content": question}]}
            client.post("/api/v1/chat/completions", json=body).raise_for_status()
    return app


def post(chat_server: ChatServer, path: str, body: dict[str, Any]) -> Any:
    with chat_server.client() as client:
        return client.post(path, json=body).json()


@pytest.mark.parametrize("path", ["/api/core/chat/getHistories", "/api/core/chat/history/getHistories"])
def test_histories_newest_first_with_titles_from_the_question(
    chat_server: ChatServer, app_id: str, path: str
) -> None:
    data = post(chat_server, path, {"appId": app_id, "offset": 0, "pageSize": 20, "source": "api"})["data"]
    assert data["total"] == 2
    assert [(c["chatId"], c["title"]) for c in data["list"]] == [
        ("h2", "second question"),
        ("h1", "first question"),
    ]
    assert set(data["list"][0]) == {"chatId", "updateTime", "appId", "customTitle", "title", "top"}
    assert post(chat_server, path, {"appId": app_id, "source": "share"})["data"] == {"list": [], "total": 0}
    assert post(chat_server, path, {})["data"] == {"list": [], "total": 0}


def test_update_history_renames_and_pins(chat_server: ChatServer, app_id: str) -> None:
    reply = post(
        chat_server,
        "/api/core/chat/updateHistory",
        {"appId": app_id, "chatId": "h1", "customTitle": "Pinned", "top": True},
    )
    assert reply["code"] == 200
    listed = post(chat_server, "/api/core/chat/getHistories", {"appId": app_id})["data"]["list"]
    assert (listed[0]["chatId"], listed[0]["customTitle"], listed[0]["top"]) == ("h1", "Pinned", True)
    post(chat_server, "/api/core/chat/history/updateHistory", {"appId": app_id, "chatId": "h1", "top": False})
    listed = post(chat_server, "/api/core/chat/getHistories", {"appId": app_id})["data"]["list"]
    assert [c["top"] for c in listed] == [False, False]


def test_pagination_records_count_from_the_newest(chat_server: ChatServer, app_id: str) -> None:
    body = {"appId": app_id, "chatId": "h2", "offset": 0, "pageSize": 2}
    newest = post(chat_server, "/api/core/chat/getPaginationRecords", body)["data"]
    assert newest["total"] == 4
    assert [r["obj"] for r in newest["list"]] == ["Human", "AI"]
    assert newest["list"][0]["value"][0]["text"]["content"] == "again"
    older = post(chat_server, "/api/core/chat/record/getPaginationRecords", {**body, "offset": 2})["data"]
    assert older["list"][0]["value"][0]["text"]["content"] == "second question"
    ai = newest["list"][1]
    assert {"llmModuleAccount", "totalQuoteList", "totalRunningTime", "historyPreviewLength"} <= set(ai)
    assert ai["llmModuleAccount"] == 1
    assert post(chat_server, "/api/core/chat/getPaginationRecords", {"appId": app_id})["data"] == {
        "list": [],
        "total": 0,
    }


def test_res_data_feedback_and_item_delete(chat_server: ChatServer, app_id: str) -> None:
    listed = post(chat_server, "/api/core/chat/getPaginationRecords", {"appId": app_id, "chatId": "h1"})[
        "data"
    ]
    data_id = listed["list"][1]["dataId"]
    with chat_server.client() as client:
        res = client.get(
            "/api/core/chat/getResData", params={"appId": app_id, "chatId": "h1", "dataId": data_id}
        )
    assert [r["moduleType"] for r in res.json()["data"]] == ["workflowStart", "chatNode"]
    feedback = {"appId": app_id, "chatId": "h1", "dataId": data_id, "userGoodFeedback": "yes"}
    assert post(chat_server, "/api/core/chat/feedback/updateUserFeedback", feedback)["code"] == 200
    item = post(chat_server, "/api/core/chat/getPaginationRecords", {"appId": app_id, "chatId": "h1"})[
        "data"
    ]["list"][1]
    assert item["userGoodFeedback"] == "yes"
    cleared = {"appId": app_id, "chatId": "h1", "dataId": data_id}  # absent fields are unset
    post(chat_server, "/api/core/chat/feedback/updateUserFeedback", cleared)
    item = post(chat_server, "/api/core/chat/getPaginationRecords", {"appId": app_id, "chatId": "h1"})[
        "data"
    ]["list"][1]
    assert "userGoodFeedback" not in item and "userBadFeedback" not in item
    missing = post(
        chat_server, "/api/core/chat/feedback/updateUserFeedback", {"appId": app_id, "chatId": "h1"}
    )
    assert missing["message"] == "dataId is required"
    with chat_server.client() as client:
        noop = client.delete("/api/core/chat/item/delete", params={"appId": app_id, "chatId": "h1"})
        assert noop.json()["code"] == 200
        gone = client.delete(
            "/api/core/chat/item/delete", params={"appId": app_id, "chatId": "h1", "contentId": data_id}
        )
        assert gone.json()["code"] == 200
    left = post(chat_server, "/api/core/chat/getPaginationRecords", {"appId": app_id, "chatId": "h1"})["data"]
    assert [r["obj"] for r in left["list"]] == ["Human"]


def test_init_gives_title_variables_and_app_config(chat_server: ChatServer, app_id: str) -> None:
    with chat_server.client() as client:
        data = client.get("/api/core/chat/init", params={"appId": app_id, "chatId": "h2"}).json()["data"]
    assert data["chatId"] == "h2" and data["title"] == "second question"
    assert data["app"]["name"] == "History" and data["app"]["chatModels"] == ["scripted-chat"]
    assert set(data["app"]["chatConfig"]) >= {"welcomeText", "variables", "fileSelectConfig", "questionGuide"}


def test_delete_one_chat_then_clear_the_api_chats(chat_server: ChatServer, app_id: str) -> None:
    with chat_server.client() as client:
        assert (
            client.delete("/api/core/chat/delHistory", params={"appId": app_id, "chatId": "h1"}).json()[
                "code"
            ]
            == 200
        )
        listed = client.post("/api/core/chat/getHistories", json={"appId": app_id}).json()["data"]
        assert [c["chatId"] for c in listed["list"]] == ["h2"]
        assert client.delete("/api/core/chat/clearHistories", params={"appId": app_id}).json()["code"] == 200
        assert client.post("/api/core/chat/getHistories", json={"appId": app_id}).json()["data"]["total"] == 0


def test_a_key_sees_only_the_chats_its_member_started(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    app = chat_server.create_app(simple_app_body("Mine and theirs"))
    team = chat_server.boot.team_id

    async def member_key(platform: Platform) -> str:
        member = await platform.teams.add_member(team, "colleague", "member")
        await platform.teams.set_permission(member.id, "app", app, "read")
        _, key = await platform.api_keys.create_key(team, member.id)
        return key

    theirs_key: str = chat_server.run(member_key)
    scripted.set_script([text_turn("a"), text_turn("b")])
    for key, chat_id in ((chat_server.admin_key, "mine"), (theirs_key, "theirs")):
        with chat_server.client(key) as client:
            body = {"appId": app, "chatId": chat_id, "messages": [{"role": "user", "content": "hi"}]}
            client.post("/api/v1/chat/completions", json=body).raise_for_status()
    for key, expected in ((chat_server.admin_key, ["mine"]), (theirs_key, ["theirs"])):
        with chat_server.client(key) as client:
            listed = client.post("/api/core/chat/getHistories", json={"appId": app}).json()["data"]
        assert [c["chatId"] for c in listed["list"]] == expected
