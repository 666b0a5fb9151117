"""Share links (FastGPT's outLink) through the HTTP API, on SQLite and PostgreSQL: the owner's CRUD
(``/api/support/outLink/*``), a visitor chatting with ``shareId`` + ``outLinkUid`` and no key, seeing
only their own history, and every limit of a link: expiry, max points, QPM per visitor, what quotes and
node details the visitor sees, and the auth hook (a loopback server, called through the egress guard)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import count
from pathlib import Path
from typing import Any

import httpx
import pytest
from live_support import (
    LiveServer,
    backend_database_url,
    create_text_dataset,
    free_port,
    ok,
    start_live_server,
)
from security_world import run_on

from fathom.config import Settings
from fathom.platform import Platform
from fathom.testing import ScriptedOpenAIServer, text_turn
from loopback_servers import QuietHandler, serve_on_loopback

MODEL = "scripted-chat"
CREATE, LIST, UPDATE, DELETE = (
    f"/api/support/outLink/{verb}" for verb in ("create", "list", "update", "delete")
)
CHAT = "/api/v1/chat/completions"
_uids = count()


@dataclass
class World:
    server: LiveServer
    owner: httpx.Client
    app_id: str
    rag_app_id: str

    def visitor(self) -> httpx.Client:
        return httpx.Client(base_url=self.server.base_url, timeout=30)  # no key, no cookie


@pytest.fixture(scope="module")
def scripted() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as server:
        server.set_script(lambda request: text_turn("Refunds take five working days."))
        yield server


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, scripted: ScriptedOpenAIServer
) -> Iterator[World]:
    root = tmp_path_factory.mktemp(f"share-{request.param}")
    database_url = backend_database_url(request, "share_links")
    models = Path(root / "models.yaml")
    models.write_text(
        f"default_chat: {MODEL}\nmodels:\n"
        f"  - {{id: {MODEL}, type: llm, base_url: '{scripted.base_url}', max_retries: 0,"
        " input_price: 1, output_price: 2}\n",
        encoding="utf-8",
    )
    settings = Settings(
        data_dir=root / "data",
        database_url=database_url,
        port=free_port(),
        workers=1,
        models_file=models,
        egress_allow_cidrs=["127.0.0.1/32"],  # the auth hook's loopback server
    )
    for server in start_live_server(settings):
        headers = {"Authorization": f"Bearer {server.admin_key}"}
        with httpx.Client(base_url=server.base_url, headers=headers, timeout=30) as owner:
            app_id = ok(
                owner.post(
                    "/api/core/app/create",
                    json={"name": "Help desk", "type": "simple", "simpleConfig": {"model": MODEL}},
                )
            )
            dataset_id = create_text_dataset(owner)
            rag = {
                "name": "Help desk with docs",
                "type": "simple",
                "simpleConfig": {"model": MODEL, "datasets": [{"datasetId": dataset_id}]},
            }
            rag_app_id = ok(owner.post("/api/core/app/create", json=rag))
            ok(owner.post("/api/core/app/version/publish", json={"appId": rag_app_id}))
            yield World(server, owner, str(app_id), str(rag_app_id))


def make_link(world: World, app_id: str | None = None, **fields: Any) -> str:
    body = {"appId": app_id or world.app_id, "type": "share", "name": "Website", **fields}
    return str(ok(world.owner.post(CREATE, json=body)))


def link_of(world: World, share_id: str, app_id: str | None = None) -> dict[str, Any]:
    links = ok(world.owner.get(LIST, params={"appId": app_id or world.app_id, "type": "share"}))
    return next(link for link in links if link["shareId"] == share_id)


def visitor_chat(
    client: httpx.Client, share_id: str, uid: str, question: str = "How long do refunds take?", **extra: Any
) -> httpx.Response:
    body = {
        "shareId": share_id,
        "outLinkUid": uid,
        "messages": [{"role": "user", "content": question}],
        **extra,
    }
    return client.post(CHAT, json=body)


def new_uid() -> str:
    return f"visitor-{next(_uids)}-{time.time_ns()}"


def refused(response: httpx.Response, status: int, status_text: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    assert body["statusText"] == status_text, body
    return body


def sse_events(text: str) -> list[tuple[str, Any]]:
    events = []
    for block in text.strip().split("\n\n"):
        event, data = "message", ""
        for line in block.split("\n"):
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                data = line[6:]
        events.append((event, data if data == "[DONE]" else json.loads(data)))
    return events


def test_only_managers_create_list_update_and_delete_an_apps_share_links(world: World) -> None:
    share_id = make_link(world, responseDetail=True, limit={"QPM": 30, "maxUsagePoints": 100})
    assert len(share_id) == 24 and share_id.isalnum() and share_id == share_id.lower()
    link = link_of(world, share_id)
    assert (link["name"], link["responseDetail"], link["showNodeStatus"], link["showRawSource"]) == (
        "Website",
        True,
        False,
        False,
    )
    assert link["limit"] == {"expiredTime": None, "QPM": 30, "maxUsagePoints": 100, "hookUrl": ""}
    assert link["usagePoints"] == 0 and link["appId"] == world.app_id

    ok(world.owner.post(UPDATE, json={"_id": link["_id"], "name": "Docs site", "showNodeStatus": True}))
    changed = link_of(world, share_id)
    assert (changed["name"], changed["showNodeStatus"], changed["responseDetail"]) == (
        "Docs site",
        True,
        True,
    )
    assert changed["limit"]["QPM"] == 30  # not sent: kept
    # no limit given: the console's default rate, 60 requests a minute per visitor (issue 31)
    assert link_of(world, make_link(world))["limit"] == {
        "expiredTime": None,
        "QPM": 60,
        "maxUsagePoints": -1,
        "hookUrl": "",
    }

    # bad input names the field; unknown ids are FastGPT's "link does not exist"
    bad = world.owner.post(CREATE, json={"appId": world.app_id, "name": "x", "limit": {"QPM": -1}})
    assert "limit.QPM" in refused(bad, 400, "invalidParams")["message"]
    nameless = world.owner.post(CREATE, json={"appId": world.app_id})
    assert "name" in refused(nameless, 400, "missingParams")["message"]
    hook = world.owner.post(
        CREATE, json={"appId": world.app_id, "name": "x", "limit": {"hookUrl": "ftp://h/"}}
    )
    assert "limit.hookUrl" in refused(hook, 400, "invalidParams")["message"]
    refused(world.owner.post(DELETE, params={"id": "0" * 24}), 404, "outlinkUnExist")

    # a member with only read on the app may not manage its links, nor see them
    async def member_key(platform: Platform) -> str:
        member = await platform.teams.add_member(
            world.server.boot.team_id, f"reader-{time.time_ns()}", "member"
        )
        await platform.teams.set_permission(member.id, "app", world.app_id, "read")
        return (await platform.api_keys.create_key(world.server.boot.team_id, member.id))[1]

    with world.server.client(run_on(world.server, member_key)) as reader:
        refused(reader.get(LIST, params={"appId": world.app_id}), 403, "unAuthApp")
        refused(reader.post(CREATE, json={"appId": world.app_id, "name": "mine"}), 403, "unAuthApp")
        refused(reader.post(DELETE, params={"id": link["_id"]}), 403, "unAuthApp")

    ok(world.owner.post(DELETE, params={"id": link["_id"]}))
    assert all(
        item["shareId"] != share_id for item in ok(world.owner.get(LIST, params={"appId": world.app_id}))
    )
    with world.visitor() as visitor:
        refused(visitor_chat(visitor, share_id, new_uid()), 404, "linkUnInvalid")


def test_a_visitor_chats_without_an_account_and_sees_only_their_own_chats(world: World) -> None:
    share_id = make_link(world)
    me, other = new_uid(), new_uid()
    with world.visitor() as visitor:
        page = ok(visitor.get("/api/core/chat/outLink/init", params={"shareId": share_id, "outLinkUid": me}))
        assert page["app"]["name"] == "Help desk" and page["outLink"]["outLinkUid"] == me

        reply = visitor_chat(visitor, share_id, me, chatId="my-first-chat")
        assert reply.status_code == 200, reply.text
        assert reply.json()["choices"][0]["message"]["content"] == "Refunds take five working days."
        streamed = visitor_chat(visitor, share_id, me, chatId="my-first-chat", stream=True, detail=True)
        events = sse_events(streamed.text)
        text = "".join(
            d["choices"][0]["delta"].get("content") or ""
            for e, d in events
            if e == "answer" and d != "[DONE]"
        )
        assert text == "Refunds take five working days."

        mine = ok(visitor.post("/api/core/chat/getHistories", json={"shareId": share_id, "outLinkUid": me}))
        assert [c["chatId"] for c in mine["list"]] == ["my-first-chat"]
        records = ok(
            visitor.post(
                "/api/core/chat/getPaginationRecords",
                json={"shareId": share_id, "outLinkUid": me, "chatId": "my-first-chat", "pageSize": 10},
            )
        )
        assert [r["obj"] for r in records["list"]] == ["Human", "AI", "Human", "AI"]

        # another visitor of the same link sees none of it, and may not continue it
        theirs = ok(
            visitor.post("/api/core/chat/getHistories", json={"shareId": share_id, "outLinkUid": other})
        )
        assert theirs == {"list": [], "total": 0}
        peek = {"shareId": share_id, "outLinkUid": other, "chatId": "my-first-chat"}
        assert ok(visitor.post("/api/core/chat/getPaginationRecords", json=peek)) == {"list": [], "total": 0}
        refused(visitor_chat(visitor, share_id, other, chatId="my-first-chat"), 403, "unAuthChat")
        # the share page of another visitor's chat is the page of a chat that does not exist
        peeked = ok(visitor.get("/api/core/chat/outLink/init", params=peek))
        made_up = ok(visitor.get("/api/core/chat/outLink/init", params={**peek, "chatId": "no-such-chat"}))
        assert peeked["title"] is None and peeked["variables"] == {}
        assert {**peeked, "chatId": None} == {**made_up, "chatId": None}
        # without a visitor id, or with a made-up link, nothing is answered
        refused(visitor_chat(visitor, share_id, ""), 400, "linkUnInvalid")
        refused(visitor_chat(visitor, "nosuchlink0000000000000", me), 404, "linkUnInvalid")

    # the owner's own history holds their own chats only; the visitor's chat is in the app's logs, from
    # source "share", owned by the visitor
    own = ok(world.owner.post("/api/core/chat/getHistories", json={"appId": world.app_id, "source": "share"}))
    assert "my-first-chat" not in [c["chatId"] for c in own["list"]]
    logs = ok(
        world.owner.post("/api/core/app/getChatLogs", json={"appId": world.app_id, "sources": ["share"]})
    )
    logged = next(c for c in logs["list"] if c["chatId"] == "my-first-chat")
    assert (logged["ownerType"], logged["ownerName"], logged["shareId"]) == ("visitor", me, share_id)


def test_a_visitor_rates_an_answer_of_their_own_chat_and_the_owner_sees_it_in_the_logs(
    world: World,
) -> None:
    share_id = make_link(world)
    me, other = new_uid(), new_uid()
    chat_id = f"rated-{me}"
    feedback = "/api/core/chat/feedback/updateUserFeedback"
    with world.visitor() as visitor:
        assert visitor_chat(visitor, share_id, me, chatId=chat_id).status_code == 200
        mine = {"shareId": share_id, "outLinkUid": me, "chatId": chat_id}
        records = ok(visitor.post("/api/core/chat/getPaginationRecords", json=mine))["list"]
        answer_id = next(r["dataId"] for r in records if r["obj"] == "AI")
        rating = {**mine, "appId": world.app_id, "dataId": answer_id, "userBadFeedback": "too vague"}

        # another visitor of the link, or the link with another app's id, may not rate it
        # (another visitor is answered as for a chat that does not exist: no id's existence leaks)
        theirs = refused(visitor.post(feedback, json={**rating, "outLinkUid": other}), 404, "unAuthChat")
        made_up = refused(
            visitor.post(feedback, json={**rating, "outLinkUid": other, "chatId": "no-such-chat"}),
            404,
            "unAuthChat",
        )
        assert theirs == made_up
        refused(visitor.post(feedback, json={**rating, "appId": world.rag_app_id}), 403, "unAuthChat")
        assert ok(visitor.post(feedback, json=rating)) is None
        rated = ok(visitor.post("/api/core/chat/getPaginationRecords", json=mine))["list"]
        assert next(r for r in rated if r["dataId"] == answer_id)["userBadFeedback"] == "too vague"

    logs = ok(
        world.owner.post(
            "/api/core/app/getChatLogs",
            json={"appId": world.app_id, "feedbackType": "bad", "sources": ["share"], "pageSize": 100},
        )
    )
    entry = next(e for e in logs["list"] if e["chatId"] == chat_id)
    assert (entry["outLinkUid"], entry["userBadFeedbackCount"]) == (me, 1)
    owners = ok(
        world.owner.post(
            "/api/core/chat/getPaginationRecords", json={"appId": world.app_id, "chatId": chat_id}
        )
    )["list"]
    assert next(r for r in owners if r["dataId"] == answer_id)["userBadFeedback"] == "too vague"


def test_an_expired_link_refuses_chats(world: World) -> None:
    share_id = make_link(world, limit={"expiredTime": "2020-01-01T00:00:00Z"})
    with world.visitor() as visitor:
        body = refused(visitor_chat(visitor, share_id, new_uid()), 403, "linkExpired")
        assert body["message"].startswith("This share link has expired") and "2020-01-01" in body["message"]
        streamed = visitor_chat(visitor, share_id, new_uid(), stream=True)
        assert streamed.status_code == 403 and "linkExpired" in streamed.text  # an SSE error frame
    ok(
        world.owner.post(
            UPDATE, json={"_id": link_of(world, share_id)["_id"], "limit": {"expiredTime": None}}
        )
    )
    with world.visitor() as visitor:
        assert visitor_chat(visitor, share_id, new_uid()).status_code == 200


def test_a_link_that_spent_its_max_points_refuses_further_chats(world: World) -> None:
    share_id = make_link(world, limit={"maxUsagePoints": 0.001, "QPM": 100})
    uid = new_uid()
    with world.visitor() as visitor:
        assert visitor_chat(visitor, share_id, uid).status_code == 200
        spent = link_of(world, share_id)["usagePoints"]
        assert spent > 0.001  # priced model: input 1 and output 2 points per 1k tokens
        body = refused(visitor_chat(visitor, share_id, uid), 403, "outLinkUsedPointsExceed")
        assert "maxUsagePoints" in body["message"]
        assert link_of(world, share_id)["usagePoints"] == spent  # the refused request cost nothing


def test_qpm_counts_each_visitors_answered_requests_of_the_last_minute(world: World) -> None:
    share_id = make_link(world, limit={"QPM": 2})
    first, second = new_uid(), new_uid()
    with world.visitor() as visitor:
        assert visitor_chat(visitor, share_id, first).status_code == 200
        assert visitor_chat(visitor, share_id, first).status_code == 200
        body = refused(visitor_chat(visitor, share_id, first), 429, "outLinkOverFrequency")
        assert "2 requests a minute" in body["message"]
        streamed = visitor_chat(visitor, share_id, first, stream=True, detail=True)
        assert streamed.status_code == 429
        assert sse_events(streamed.text)[0][0] == "error"
        assert visitor_chat(visitor, share_id, second).status_code == 200  # per visitor


def test_response_detail_and_raw_source_decide_what_a_visitor_sees_of_quotes_and_nodes(world: World) -> None:
    hidden = make_link(world, world.rag_app_id, responseDetail=False, showNodeStatus=False)
    quotes = make_link(world, world.rag_app_id, responseDetail=True, showNodeStatus=True, showRawSource=False)
    raw = make_link(world, world.rag_app_id, responseDetail=True, showRawSource=True)
    question = "How long do refunds take?"
    with world.visitor() as visitor:
        uid = new_uid()
        plain = visitor_chat(visitor, hidden, uid, question, detail=True, chatId="hidden-chat").json()
        assert "responseData" not in plain or plain["responseData"] == []
        events = [
            e
            for e, _ in sse_events(
                visitor_chat(visitor, hidden, uid, question, stream=True, detail=True).text
            )
        ]
        assert "answer" in events and "flowResponses" not in events and "flowNodeStatus" not in events
        records = ok(
            visitor.post(
                "/api/core/chat/getPaginationRecords",
                json={"shareId": hidden, "outLinkUid": uid, "chatId": "hidden-chat"},
            )
        )["list"]
        assert all(r.get("totalQuoteList", []) == [] for r in records)
        ai = next(r for r in records if r["obj"] == "AI")
        res = {"shareId": hidden, "outLinkUid": uid, "chatId": "hidden-chat", "dataId": ai["dataId"]}
        assert ok(visitor.get("/api/core/chat/getResData", params=res)) == []

        shown = visitor_chat(visitor, quotes, uid, question, detail=True).json()
        search = next(r for r in shown["responseData"] if r["moduleType"] == "datasetSearchNode")
        assert "Refunds" in search["quoteList"][0]["q"]
        assert "sourceId" not in search["quoteList"][0] and "collectionId" not in search["quoteList"][0]
        events = [
            e
            for e, _ in sse_events(
                visitor_chat(visitor, quotes, uid, question, stream=True, detail=True).text
            )
        ]
        assert "flowResponses" in events and "flowNodeStatus" in events

        full = visitor_chat(visitor, raw, uid, question, detail=True).json()
        search = next(r for r in full["responseData"] if r["moduleType"] == "datasetSearchNode")
        assert search["quoteList"][0]["collectionId"]


@dataclass
class Hook:
    url: str
    calls: list[tuple[str, dict[str, Any]]]
    finished: threading.Event


@pytest.fixture(scope="module")
def hook() -> Iterator[Hook]:
    calls: list[tuple[str, dict[str, Any]]] = []
    finished = threading.Event()

    class Handler(QuietHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            calls.append((self.path, body))
            if self.path.endswith("/shareAuth/finish"):
                finished.set()
                answer: dict[str, Any] = {"success": True}
            elif body.get("token") == "good-token" and "forbidden" not in str(body.get("question")):
                answer = {"success": True, "data": {"uid": "user-42"}}
            else:
                answer = {"success": False, "message": "存在违规词"}
            self.send_body(200, json.dumps(answer).encode(), "application/json")

    with serve_on_loopback(Handler) as url:
        yield Hook(url + "/hooks", calls, finished)


def test_the_auth_hook_admits_names_and_refuses_visitors(world: World, hook: Hook) -> None:
    share_id = make_link(world, limit={"hookUrl": hook.url})
    hook.finished.clear()
    with world.visitor() as visitor:
        page = ok(
            visitor.get(
                "/api/core/chat/outLink/init", params={"shareId": share_id, "outLinkUid": "good-token"}
            )
        )
        assert page["outLink"]["outLinkUid"] == "user-42"
        assert ("/hooks/shareAuth/init", {"token": "good-token"}) in hook.calls

        assert visitor_chat(visitor, share_id, "good-token", "Refunds?", chatId="hooked").status_code == 200
        assert ("/hooks/shareAuth/start", {"token": "good-token", "question": "Refunds?"}) in hook.calls
        assert hook.finished.wait(10)
        finish = next(body for path, body in hook.calls if path == "/hooks/shareAuth/finish")
        assert finish["token"] == "good-token" and finish["appName"] == "Help desk"
        assert any(r.get("moduleType") for r in finish["responseData"])
        # the chat belongs to the uid the hook named
        mine = ok(
            visitor.post(
                "/api/core/chat/getHistories", json={"shareId": share_id, "outLinkUid": "good-token"}
            )
        )
        assert [c["chatId"] for c in mine["list"]] == ["hooked"]

        body = refused(
            visitor_chat(visitor, share_id, "good-token", "a forbidden question"), 403, "unAuthUser"
        )
        assert "存在违规词" in body["message"]
        refused(visitor_chat(visitor, share_id, "stolen-token"), 403, "unAuthUser")
        init = visitor.get(
            "/api/core/chat/outLink/init", params={"shareId": share_id, "outLinkUid": "stolen-token"}
        )
        refused(init, 403, "unAuthUser")

    # a hook the egress guard never fetches (a cloud metadata address) admits nobody
    guarded = make_link(world, limit={"hookUrl": "http://169.254.169.254/latest"})
    with world.visitor() as visitor:
        body = refused(visitor_chat(visitor, guarded, "good-token"), 403, "unAuthUser")
        assert "metadata" in body["message"]


def test_deleting_the_app_deletes_its_share_links(world: World) -> None:
    body = {"name": "Short-lived", "type": "simple", "simpleConfig": {"model": MODEL}}
    app_id = str(ok(world.owner.post("/api/core/app/create", json=body)))
    share_id = make_link(world, app_id)
    with world.visitor() as visitor:
        assert visitor_chat(visitor, share_id, new_uid()).status_code == 200
        ok(world.owner.post("/api/core/app/del", json={"appId": app_id}))
        refused(visitor_chat(visitor, share_id, new_uid()), 404, "linkUnInvalid")
