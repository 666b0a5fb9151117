"""Every chat has an owner (issue 28, docs/security.md "Who may touch a chat"), tried through HTTP on
SQLite and PostgreSQL: ten callers × three chats (a member's console chat, an app key's chat, a share-link
visitor's chat) × every chat route.

The rule: the owner may do anything; a caller who manages the app reads and deletes, never changes or
appends; anyone else gets **the same answer as for a chat that does not exist** (each case compares the
answer with the one a made-up chatId gets). Two routes start or extend a chat under the id they are
sent, so for them "missing" would mean "create": there another caller's chat is refused with FastGPT's
``unAuthChat`` (403), as FastGPT's ``authChatCrud`` does.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from live_support import LiveServer, backend_database_url, ok
from security_world import LOGIN, MODEL, run_on, scripted, serve

from fathom.platform import Platform
from fathom.testing import ScriptedOpenAIServer

__all__ = ["scripted"]

PASSWORD = "a member's own password"
MADE_UP = "no-such-chat"
_ids = itertools.count()

# the callers of the matrix
OWNER = "owner member"  # a member (read on the app) chatting in the console: owns the member chat
READER = "reader"  # read on the app
WRITER = "writer"  # write on the app
MANAGER = "manager"  # manage on the app (FastGPT's chat-log permission)
OTHER_MEMBER = "other member"  # a member with no permission on the app at all
APP_KEY = "app key"  # owns the key chat
OTHER_KEY = "another key of the same app"
VISITOR = "visitor"  # owns the visitor chat
OTHER_VISITOR = "other visitor"  # another visitor of the same link
EXPIRED = "expired link"  # a visitor of a link that has expired since they chatted
CALLERS = [OWNER, READER, WRITER, MANAGER, OTHER_MEMBER, APP_KEY, OTHER_KEY, VISITOR, OTHER_VISITOR, EXPIRED]
MEMBER_CHAT, KEY_CHAT, VISITOR_CHAT = "member chat", "key chat", "visitor chat"
OWNERS = {MEMBER_CHAT: OWNER, KEY_CHAT: APP_KEY, VISITOR_CHAT: VISITOR}


@dataclass
class Cast:
    base_url: str
    app_id: str
    share_id: str
    expired_share_id: str
    sessions: dict[str, httpx.Client] = field(default_factory=dict)  # member callers
    keys: dict[str, str] = field(default_factory=dict)  # key callers
    uids: dict[str, str] = field(default_factory=dict)  # visitor callers

    def is_visitor(self, caller: str) -> bool:
        return caller in (VISITOR, OTHER_VISITOR, EXPIRED)

    def link_of(self, caller: str) -> str:
        return self.expired_share_id if caller == EXPIRED else self.share_id

    def call(self, caller: str, path: str, body: dict[str, Any]) -> httpx.Response:
        """POST as ``caller``: a session's cookie + CSRF token, a key, or a visitor's shareId + uid."""
        if caller in self.sessions:
            return self.sessions[caller].post(path, json=body)
        if caller in self.keys:
            with httpx.Client(base_url=self.base_url, timeout=30) as client:
                headers = {"Authorization": f"Bearer {self.keys[caller]}"}
                return client.post(path, json=body, headers=headers)
        visitor = {"shareId": self.link_of(caller), "outLinkUid": self.uids[caller]}
        with httpx.Client(base_url=self.base_url, timeout=30) as client:
            return client.post(path, json={**body, **visitor})

    def chat(self, caller: str, chat_id: str, text: str = "hello") -> httpx.Response:
        body = {"appId": self.app_id, "chatId": chat_id, "messages": [{"role": "user", "content": text}]}
        return self.call(caller, "/api/v1/chat/completions", body)

    def new_chat(self, kind: str) -> tuple[str, str]:
        """A fresh chat of ``kind`` by its owner: (chatId, the dataId of its answer)."""
        chat_id = f"{kind.split()[0]}-{next(_ids)}"
        owner = OWNERS[kind]
        assert self.chat(owner, chat_id, "my secret is 4242").status_code == 200
        records = ok(self.call(owner, RECORDS, {"appId": self.app_id, "chatId": chat_id}))["list"]
        return chat_id, str(records[-1]["dataId"])

    def owner_sees(self, kind: str, chat_id: str) -> dict[str, Any]:
        return dict(ok(self.call(OWNERS[kind], RECORDS, {"appId": self.app_id, "chatId": chat_id})))


RECORDS = "/api/core/chat/getPaginationRecords"
HISTORIES = "/api/core/chat/getHistories"
RES_DATA = "/api/core/chat/getResData"
INIT = "/api/core/chat/init"
RENAME = "/api/core/chat/updateHistory"
DELETE = "/api/core/chat/delHistory"
CLEAR = "/api/core/chat/clearHistories"
ITEM_DELETE = "/api/core/chat/item/delete"
FEEDBACK = "/api/core/chat/feedback/updateUserFeedback"
STOP = "/api/v2/chat/stop"
RESUME = "/api/v2/chat/resume"
UPLOAD = "/api/core/chat/file/upload"
LOGS = "/api/core/app/getChatLogs"


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def cast(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, scripted: ScriptedOpenAIServer
) -> Iterator[Cast]:
    database_url = backend_database_url(request, "owners")
    for server in serve(tmp_path_factory.mktemp(f"owners-{request.param}"), scripted, database_url):
        cast = _build_cast(server)
        yield cast
        for session in cast.sessions.values():
            session.close()


def _build_cast(server: LiveServer) -> Cast:
    with server.client(server.admin_key) as admin:
        body = {"name": "Bot", "type": "simple", "simpleConfig": {"model": MODEL}}
        app_id = str(ok(admin.post("/api/core/app/create", json=body)))
        keys = {
            name: str(ok(admin.post("/api/support/openapi/create", json={"name": name, "appId": app_id})))
            for name in (APP_KEY, OTHER_KEY)
        }
        share_id = str(
            ok(
                admin.post(
                    "/api/support/outLink/create",
                    json={"appId": app_id, "name": "Web", "responseDetail": True},
                )
            )
        )
        expired_share_id = str(
            ok(admin.post("/api/support/outLink/create", json={"appId": app_id, "name": "Old"}))
        )
    grants = {OWNER: "read", READER: "read", WRITER: "write", MANAGER: "manage", OTHER_MEMBER: None}

    async def members(platform: Platform) -> None:
        hashed = await platform.accounts.hash_password(PASSWORD)
        for number, grant in enumerate(grants.values()):
            member = await platform.teams.add_member(server.boot.team_id, f"member{number}", "member")
            if grant:
                await platform.teams.set_permission(member.id, "app", app_id, grant)
            await platform.accounts.store.create_user(member.id, f"member{number}", hashed)

    run_on(server, members)
    cast = Cast(server.base_url, app_id, share_id, expired_share_id, keys=keys)
    for number, name in enumerate(grants):
        session = httpx.Client(base_url=server.base_url, timeout=30)
        signed = ok(session.post(LOGIN, json={"username": f"member{number}", "password": PASSWORD}))
        session.headers["X-CSRF-Token"] = signed["csrfToken"]
        cast.sessions[name] = session
    cast.uids = {VISITOR: "visitor-one", OTHER_VISITOR: "visitor-two", EXPIRED: "visitor-old"}
    # the expired link's visitor chatted while it was live; then the link expired
    assert cast.chat(EXPIRED, "old-visit").status_code == 200
    with server.client(server.admin_key) as admin:
        links = ok(admin.get("/api/support/outLink/list", params={"appId": app_id}))
        link_id = next(link["_id"] for link in links if link["shareId"] == expired_share_id)
        past = (datetime.now(UTC) - timedelta(minutes=1)).isoformat()
        ok(admin.post("/api/support/outLink/update", json={"_id": link_id, "limit": {"expiredTime": past}}))
    return cast


def _owns(caller: str, kind: str) -> bool:
    return OWNERS[kind] == caller


def _reads(caller: str, kind: str) -> bool:
    return _owns(caller, kind) or caller == MANAGER


def _same(answer: httpx.Response, missing: httpx.Response, chat_id: str) -> None:
    """The answer for a chat is the answer for a made-up chat (ids blanked out)."""
    assert answer.status_code == missing.status_code, (answer.text, missing.text)
    assert answer.text.replace(chat_id, MADE_UP) == missing.text, (answer.text, missing.text)


def _mine(cast: Cast, caller: str, chat_id: str) -> bool:
    listed = cast.call(caller, HISTORIES, {"appId": cast.app_id})
    return listed.status_code == 200 and chat_id in [c["chatId"] for c in listed.json()["data"]["list"]]


@pytest.mark.parametrize("kind", [MEMBER_CHAT, KEY_CHAT, VISITOR_CHAT])
@pytest.mark.parametrize("caller", CALLERS)
def test_reading_a_chat_is_the_owners_and_the_app_managers(cast: Cast, caller: str, kind: str) -> None:
    chat_id, answer_id = cast.new_chat(kind)
    ask = {"appId": cast.app_id, "chatId": chat_id}
    made_up = {"appId": cast.app_id, "chatId": MADE_UP}
    # the history list holds the caller's own chats only (a manager reads others' in the logs)
    assert _mine(cast, caller, chat_id) == _owns(caller, kind)
    records = cast.call(caller, RECORDS, ask)
    res_data = cast.call(caller, RES_DATA, {**ask, "dataId": answer_id})
    if _reads(caller, kind):
        assert "4242" in str(ok(records)["list"])
        assert isinstance(ok(res_data), list) and ok(res_data)
    else:
        _same(records, cast.call(caller, RECORDS, made_up), chat_id)
        _same(res_data, cast.call(caller, RES_DATA, {**made_up, "dataId": answer_id}), chat_id)
    if cast.is_visitor(caller):
        link = {"shareId": cast.link_of(caller), "outLinkUid": cast.uids[caller]}
        with httpx.Client(base_url=cast.base_url, timeout=30) as client:
            init = client.get("/api/core/chat/outLink/init", params={**link, "chatId": chat_id})
            missing = client.get("/api/core/chat/outLink/init", params={**link, "chatId": MADE_UP})
    else:
        init = cast.call(caller, INIT, ask)
        missing = cast.call(caller, INIT, made_up)
    if _reads(caller, kind):
        assert ok(init)["title"] == "my secret is 4242"
    else:
        _same(init, missing, chat_id)


@pytest.mark.parametrize("kind", [MEMBER_CHAT, KEY_CHAT, VISITOR_CHAT])
@pytest.mark.parametrize("caller", CALLERS)
def test_changing_a_chat_is_the_owners_alone(cast: Cast, caller: str, kind: str) -> None:
    chat_id, answer_id = cast.new_chat(kind)
    ask = {"appId": cast.app_id, "chatId": chat_id}
    made_up = {"appId": cast.app_id, "chatId": MADE_UP}
    owner = _owns(caller, kind)
    # rename and pin (no visitor route)
    if not cast.is_visitor(caller):
        renamed = cast.call(caller, RENAME, {**ask, "customTitle": "taken", "top": True})
        if owner:
            ok(renamed)
        else:
            _same(
                renamed, cast.call(caller, RENAME, {**made_up, "customTitle": "taken", "top": True}), chat_id
            )
    # the user's own like / dislike
    rating = {"dataId": answer_id, "userBadFeedback": "not mine"}
    rated = cast.call(caller, FEEDBACK, {**ask, **rating})
    if owner:
        ok(rated)
    else:
        _same(rated, cast.call(caller, FEEDBACK, {**made_up, **rating}), chat_id)
    # appending a turn: the owner's; anyone else is refused (a made-up id would start a new chat)
    appended = cast.chat(caller, chat_id, "and now mine")
    if owner:
        assert appended.status_code == 200, appended.text
    elif caller == OTHER_MEMBER:
        assert appended.status_code == 403  # no permission on the app at all
    elif caller == EXPIRED:
        assert appended.status_code == 403 and appended.json()["statusText"] == "linkExpired"
    else:
        assert appended.status_code == 403, appended.text
        assert appended.json()["statusText"] == "unAuthChat"
    # stop and resume: the owner resumes the last run's frames (kept a while after it ended); for anyone
    # else the chat has no run, as a made-up chat
    if owner and not cast.is_visitor(caller):
        assert ok(cast.call(caller, STOP, ask)) == {"success": False}  # (it has ended)
        assert "event: resumeCompleted" in cast.call(caller, RESUME, ask).text
    elif not cast.is_visitor(caller):
        _same(cast.call(caller, STOP, ask), cast.call(caller, STOP, made_up), chat_id)
        _same(cast.call(caller, RESUME, ask), cast.call(caller, RESUME, made_up), chat_id)
    # a file for the chat: the owner's
    if not cast.is_visitor(caller) and caller != OTHER_MEMBER:
        form = {"appId": cast.app_id, "chatId": chat_id}
        files = {"file": ("note.txt", b"a note", "text/plain")}
        if caller in cast.sessions:
            uploaded = cast.sessions[caller].post(UPLOAD, data=form, files=files)
        else:
            with httpx.Client(base_url=cast.base_url, timeout=30) as client:
                auth = {"Authorization": f"Bearer {cast.keys[caller]}"}
                uploaded = client.post(UPLOAD, data=form, files=files, headers=auth)
        if owner:
            assert uploaded.status_code == 200, uploaded.text
        else:
            assert uploaded.status_code == 403 and uploaded.json()["statusText"] == "unAuthChat"
    # what the owner sees afterwards: nobody else's change landed
    records = cast.owner_sees(kind, chat_id)["list"]
    assert len(records) == (4 if owner else 2)
    assert ("not mine" in str(records)) == owner
    assert ("and now mine" in str(records)) == owner


@pytest.mark.parametrize("kind", [MEMBER_CHAT, KEY_CHAT, VISITOR_CHAT])
@pytest.mark.parametrize("caller", [c for c in CALLERS if c not in (VISITOR, OTHER_VISITOR, EXPIRED)])
def test_deleting_a_chat_is_the_owners_and_the_app_managers(cast: Cast, caller: str, kind: str) -> None:
    """Visitors have no delete routes (their history lives 30 days)."""
    chat_id, answer_id = cast.new_chat(kind)
    ask = {"appId": cast.app_id, "chatId": chat_id}
    made_up = {"appId": cast.app_id, "chatId": MADE_UP}
    may_delete = _reads(caller, kind)
    # one record
    item = {"contentId": answer_id}
    removed = cast.call(caller, ITEM_DELETE, {**ask, **item})
    if may_delete:
        ok(removed)
        assert len(cast.owner_sees(kind, chat_id)["list"]) == 1
    else:
        _same(removed, cast.call(caller, ITEM_DELETE, {**made_up, **item}), chat_id)
        assert len(cast.owner_sees(kind, chat_id)["list"]) == 2
    # the chat; clearing removes the caller's own chats only
    deleted = cast.call(caller, DELETE, ask)
    if may_delete:
        ok(deleted)
        assert cast.owner_sees(kind, chat_id) == {"list": [], "total": 0}
    else:
        _same(deleted, cast.call(caller, DELETE, made_up), chat_id)
        assert cast.owner_sees(kind, chat_id)["total"] == 2
        if caller != OTHER_MEMBER:  # (who may not even read the app)
            ok(cast.call(caller, CLEAR, {"appId": cast.app_id}))
        assert cast.owner_sees(kind, chat_id)["total"] == 2


def test_clearing_removes_the_callers_own_chats(cast: Cast) -> None:
    mine, _ = cast.new_chat(MEMBER_CHAT)
    keys, _ = cast.new_chat(KEY_CHAT)
    ok(cast.call(OWNER, CLEAR, {"appId": cast.app_id}))
    assert cast.owner_sees(MEMBER_CHAT, mine) == {"list": [], "total": 0}
    assert cast.owner_sees(KEY_CHAT, keys)["total"] == 2
    ok(cast.call(APP_KEY, CLEAR, {"appId": cast.app_id}))
    assert cast.owner_sees(KEY_CHAT, keys) == {"list": [], "total": 0}


def test_an_expired_links_visitor_no_longer_reaches_their_chats(cast: Cast) -> None:
    listed = ok(cast.call(EXPIRED, HISTORIES, {"appId": cast.app_id}))
    assert listed == {"list": [], "total": 0}
    records = cast.call(EXPIRED, RECORDS, {"appId": cast.app_id, "chatId": "old-visit"})
    _same(records, cast.call(EXPIRED, RECORDS, {"appId": cast.app_id, "chatId": MADE_UP}), "old-visit")
    # the chat itself is kept: the app's managers still read it in the logs
    logs = ok(cast.call(MANAGER, LOGS, {"appId": cast.app_id, "sources": ["share"], "pageSize": 100}))
    assert "old-visit" in [entry["chatId"] for entry in logs["list"]]


def test_the_logs_show_every_chat_with_its_owner(cast: Cast) -> None:
    member_chat, _ = cast.new_chat(MEMBER_CHAT)
    key_chat, _ = cast.new_chat(KEY_CHAT)
    visitor_chat, _ = cast.new_chat(VISITOR_CHAT)
    logs = ok(cast.call(MANAGER, LOGS, {"appId": cast.app_id, "pageSize": 100}))
    owners = {e["chatId"]: (e["ownerType"], e["ownerName"]) for e in logs["list"]}
    assert owners[member_chat] == ("member", "member0")
    assert owners[key_chat] == ("key", APP_KEY)
    assert owners[visitor_chat] == ("visitor", "visitor-one")
    # the logs are the managers': a reader or an app key may not read them
    assert cast.call(READER, LOGS, {"appId": cast.app_id}).status_code == 403
    assert cast.call(APP_KEY, LOGS, {"appId": cast.app_id}).status_code == 403
