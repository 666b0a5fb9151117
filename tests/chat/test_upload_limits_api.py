"""Upload limits through HTTP on SQLite and PostgreSQL (issue 28): each caller's uploads a minute (a 429
with FastGPT's envelope, one count across chat files, knowledge-base files and file previews, per API key
and per share-link visitor), the team's storage quota (a 413), names and ids that would be folders of a
key (``..``, ``/``, ``\\``, control characters: a 400 naming the field), and chat files that go from disk
with their chat (``delHistory``, ``clearHistories``), their chat item and their app."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from chat_support import MODEL, ChatServer, free_port, start_chat_server
from live_support import backend_database_url

from fathom.config import Settings
from fathom.platform import Platform
from fathom.testing import ScriptedOpenAIServer, text_turn
from workflow_json import START, edge, field

RATE = 4  # uploads a minute per caller
QUOTA = 256 * 1024  # bytes per team
_names = itertools.count()
LOCAL_FILE = "/api/core/dataset/collection/create/localFile"


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, scripted: ScriptedOpenAIServer
) -> Iterator[ChatServer]:
    root = tmp_path_factory.mktemp("upload-limits")
    database_url = backend_database_url(request, "uplim")
    port = free_port()
    settings = Settings(
        data_dir=root / "data",
        database_url=database_url,
        port=port,
        workers=0,
        openai_base_url=scripted.base_url,
        chat_model=MODEL,
        public_url=f"http://127.0.0.1:{port}",
        upload_rate_per_minute=RATE,
        team_storage_quota_bytes=QUOTA,
    )
    yield from start_chat_server(settings, scripted)


def _file_app(server: ChatServer) -> str:
    """start → chatNode → answer, taking files."""
    chat = {
        "nodeId": "llm",
        "name": "llm",
        "flowNodeType": "chatNode",
        "inputs": [
            field("model", MODEL),
            field("history", 0, "chatHistory"),
            field("userChatInput", ["start", "userChatInput"], render="reference"),
        ],
        "outputs": [{"id": "answerText", "key": "answerText", "valueType": "string"}],
    }
    workflow = {
        "nodes": [START, chat],
        "edges": [edge("start", "llm")],
        "chatConfig": {"fileSelectConfig": {"canSelectFile": True, "maxFiles": 5}},
    }
    return server.create_app({"name": f"Files {next(_names)}", "type": "advanced", **workflow})


def _team_key(server: ChatServer) -> str:
    """A new key of the whole team (a caller of its own)."""

    async def make(platform: Platform) -> str:
        _, plain = await platform.api_keys.create_key(server.boot.team_id, server.boot.member_id, name="team")
        return plain

    return str(server.run(make))


def _upload(
    client: httpx.Client, values: dict[str, Any], name: str = "notes.txt", data: bytes | None = None
) -> httpx.Response:
    data = data if data is not None else f"notes {next(_names)}\n".encode()
    return client.post("/api/core/chat/file/upload", files={"file": (name, data, "text/plain")}, data=values)


def _ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["code"] == 200, body
    return body["data"]


def _refused(response: httpx.Response, status: int, status_text: str, code: int) -> str:
    """FastGPT's envelope, exactly: ``{code, statusText, message, data: null}``; the message."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"code", "statusText", "message", "data"}, body
    assert (body["code"], body["statusText"], body["data"]) == (code, status_text, None), body
    return str(body["message"])


def _blob(server: ChatServer, data: bytes) -> Path:
    digest = hashlib.sha256(data).hexdigest()
    return Path(server.platform.settings.data_dir) / "files" / digest[:2] / digest


def _chat(
    client: httpx.Client, scripted: ScriptedOpenAIServer, app_id: str, chat_id: str, key: str | None = None
) -> None:
    """One turn in ``chat_id`` (user ``u1``) whose question names the chat file ``key``."""
    scripted.set_script([text_turn("noted")])
    content: list[dict[str, Any]] = [{"type": "text", "text": "read this"}]
    if key:
        content.append({"type": "file_url", "name": "notes.txt", "url": "", "key": key})
    body = {
        "appId": app_id,
        "chatId": chat_id,
        "customUid": "u1",
        "messages": [{"role": "user", "content": content}],
    }
    _ok_chat = client.post("/api/v1/chat/completions", json=body)
    assert _ok_chat.status_code == 200, _ok_chat.text


def test_one_upload_more_than_the_rate_is_a_429_per_caller(server: ChatServer) -> None:
    app_id = _file_app(server)
    with server.client(server.app_key(app_id)) as client, server.client(server.app_key(app_id)) as other:
        for n in range(RATE):
            _ok(_upload(client, {"appId": app_id, "chatId": f"r{n}"}))
        late = _upload(client, {"appId": app_id, "chatId": "r9"})
        message = _refused(late, 429, "tooManyRequests", 429)
        assert "at most 4 a minute" in message and "FATHOM_UPLOAD_RATE_PER_MINUTE" in message
        assert late.headers["retry-after"] == "60"
        _ok(_upload(other, {"appId": app_id, "chatId": "r0"}))  # another key of the same app: its own count


def test_racing_uploads_of_one_caller_never_pass_the_rate(server: ChatServer) -> None:
    app_id = _file_app(server)
    key = server.app_key(app_id)

    def one(n: int) -> int:
        with server.client(key) as client:
            return _upload(client, {"appId": app_id, "chatId": f"race{n}"}).status_code

    with ThreadPoolExecutor(max_workers=12) as pool:
        statuses = list(pool.map(one, range(12)))
    assert statuses.count(200) <= RATE
    assert set(statuses) <= {200, 429}


def test_chat_files_knowledge_base_files_and_previews_share_one_count(server: ChatServer) -> None:
    app_id = _file_app(server)
    with server.client(_team_key(server)) as client:
        dataset_id = _ok(client.post("/api/core/dataset/create", json={"name": f"kb {next(_names)}"}))
        form = {"data": f'{{"datasetId": "{dataset_id}"}}'}
        for n in range(RATE - 2):
            _ok(_upload(client, {"appId": app_id, "chatId": f"k{n}"}))
        doc = ("a.txt", b"First paragraph.\n\nSecond one.", "text/plain")
        preview = client.post("/api/core/dataset/file/getPreviewChunks", files={"file": doc}, data=form)
        _ok(preview)
        _ok(client.post(LOCAL_FILE, files={"file": doc}, data=form))
        late = client.post(LOCAL_FILE, files={"file": doc}, data=form)
        _refused(late, 429, "tooManyRequests", 429)
        _refused(
            client.post("/api/core/dataset/file/getPreviewChunks", files={"file": doc}, data=form),
            429,
            "tooManyRequests",
            429,
        )


def _share_link(server: ChatServer, app_id: str, **limit: Any) -> str:
    body = {"appId": app_id, "type": "share", "name": "Website", "limit": limit or None}
    with server.client() as client:
        return str(_ok(client.post("/api/support/outLink/create", json=body)))


def test_a_share_link_visitor_uploads_within_their_own_rate(server: ChatServer) -> None:
    app_id = _file_app(server)
    share_id = _share_link(server, app_id)
    with httpx.Client(base_url=server.base_url, timeout=20) as anonymous:

        def visit(uid: str, chat_id: str) -> httpx.Response:
            values = {"appId": app_id, "chatId": chat_id, "shareId": share_id, "outLinkUid": uid}
            return _upload(anonymous, values)

        saved = _ok(visit("visitor-a", "v0"))
        assert saved["key"].startswith(f"chat/app/{app_id}/visitor-a/v0/")
        for n in range(1, RATE):
            _ok(visit("visitor-a", f"v{n}"))
        _refused(visit("visitor-a", "v9"), 429, "tooManyRequests", 429)
        _ok(visit("visitor-b", "w0"))  # another visitor of the same link: their own count
        auth_data = {"outLinkAuthData": {"shareId": share_id, "outLinkUid": "visitor-c"}}
        outlink = {"appId": app_id, "chatId": "w1", "data": json.dumps(auth_data)}
        assert _ok(_upload(anonymous, outlink))["key"].startswith(f"chat/app/{app_id}/visitor-c/w1/")
        message = _refused(visit("..", "w2"), 400, "invalidParams", 507000)
        assert message.startswith("outLinkUid: ")
    expired = _share_link(server, app_id, expiredTime="2020-01-01T00:00:00Z")
    with httpx.Client(base_url=server.base_url, timeout=20) as anonymous:
        values = {"appId": app_id, "chatId": "x0", "shareId": expired, "outLinkUid": "visitor-a"}
        _refused(_upload(anonymous, values), 403, "linkExpired", 505005)


@pytest.mark.parametrize(
    ("values", "name", "message"),
    [
        ({"chatId": ".."}, "a.txt", "chatId: at most 128 characters, not '.' or '..'"),
        ({"chatId": "c1", "customUid": ".."}, "a.txt", "customUid: at most 128 characters"),
        ({"chatId": "c1", "customUid": "a\\b"}, "a.txt", "customUid: at most 128 characters"),
        ({"chatId": "c\x01"}, "a.txt", "chatId: at most 128 characters"),
        ({"chatId": "c1"}, "../a.txt", "file: the file name may not hold '/' or '\\'"),
        ({"chatId": "c1"}, "dir\\a.txt", "file: the file name may not hold '/' or '\\'"),
        ({"chatId": "c1"}, "..", "file: the file name may not be '..'"),
    ],
)
def test_names_and_ids_that_would_leave_their_folder_are_a_400(
    server: ChatServer, values: dict[str, str], name: str, message: str
) -> None:
    app_id = _file_app(server)
    with server.client(server.app_key(app_id)) as client:
        response = _upload(client, {"appId": app_id, **values}, name)
    assert _refused(response, 400, "invalidParams", 507000).startswith(message)


def test_a_knowledge_base_file_named_with_a_path_is_a_400(server: ChatServer) -> None:
    with server.client(_team_key(server)) as client:
        dataset_id = _ok(client.post("/api/core/dataset/create", json={"name": f"kb {next(_names)}"}))
        doc = ("../../etc/a.txt", b"text", "text/plain")
        form = {"data": f'{{"datasetId": "{dataset_id}"}}'}
        response = client.post(LOCAL_FILE, files={"file": doc}, data=form)
    message = _refused(response, 400, "invalidParams", 507000)
    assert message.startswith("file.filename: the file name may not hold '/'")


def test_chat_files_go_from_disk_with_their_chat(server: ChatServer, scripted: ScriptedOpenAIServer) -> None:
    app_id = _file_app(server)
    kept, gone, shared = os.urandom(500), os.urandom(500), os.urandom(500)
    with server.client(server.app_key(app_id)) as client:
        one = _ok(_upload(client, {"appId": app_id, "chatId": "d1", "customUid": "u1"}, data=gone))
        _ok(_upload(client, {"appId": app_id, "chatId": "d1", "customUid": "u1"}, data=shared))
        _ok(_upload(client, {"appId": app_id, "chatId": "d2", "customUid": "u1"}, data=shared))
        _ok(_upload(client, {"appId": app_id, "chatId": "d2", "customUid": "u1"}, data=kept))
        _chat(client, scripted, app_id, "d1", one["key"])
        assert _blob(server, gone).exists()
        _ok(client.post("/api/core/chat/delHistory", json={"appId": app_id, "chatId": "d1"}))
    assert not _blob(server, gone).exists()
    assert _blob(server, shared).exists() and _blob(server, kept).exists()  # chat d2 still names them
    with httpx.Client(timeout=20) as anonymous:
        assert anonymous.get(one["previewUrl"]).status_code == 404


def test_clear_histories_and_app_delete_take_the_files(
    server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    app_id, other_app = _file_app(server), _file_app(server)
    cleared, also, in_app = os.urandom(400), os.urandom(400), os.urandom(400)
    with server.client() as client:
        _ok(_upload(client, {"appId": app_id, "chatId": "e1", "customUid": "u1"}, data=cleared))
        _ok(_upload(client, {"appId": app_id, "chatId": "e2", "customUid": "u1"}, data=also))
        _ok(_upload(client, {"appId": other_app, "chatId": "e1", "customUid": "u1"}, data=in_app))
        for chat_id in ("e1", "e2"):
            _chat(client, scripted, app_id, chat_id)
        _ok(client.post("/api/core/chat/clearHistories", json={"appId": app_id}))
        assert not _blob(server, cleared).exists() and not _blob(server, also).exists()
        assert _blob(server, in_app).exists()  # another app's chat of the same id keeps its file
        _ok(client.post("/api/core/app/del", json={"appId": other_app}))
    assert not _blob(server, in_app).exists()


def test_deleting_the_chat_item_that_names_a_file_takes_the_file(
    server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    app_id = _file_app(server)
    data = os.urandom(300)
    with server.client(server.app_key(app_id)) as client:
        saved = _ok(_upload(client, {"appId": app_id, "chatId": "f1", "customUid": "u1"}, data=data))
        _chat(client, scripted, app_id, "f1", saved["key"])
        assert _blob(server, data).exists()
        page = {"appId": app_id, "chatId": "f1", "pageSize": 10}
        records = _ok(client.post("/api/core/chat/getPaginationRecords", json=page))["list"]
        [human] = [record["dataId"] for record in records if record["obj"] == "Human"]
        body = {"appId": app_id, "chatId": "f1", "contentId": human}
        _ok(client.post("/api/core/chat/item/delete", json=body))
    assert not _blob(server, data).exists()


def test_knowledge_base_files_go_from_disk_with_their_collection_and_dataset(server: ChatServer) -> None:
    one, two = os.urandom(200).hex().encode(), os.urandom(200).hex().encode()
    with server.client(_team_key(server)) as client:
        dataset_id = _ok(client.post("/api/core/dataset/create", json={"name": f"kb {next(_names)}"}))
        form = {"data": json.dumps({"datasetId": dataset_id})}
        created = [
            _ok(client.post(LOCAL_FILE, files={"file": ("a.txt", data, "text/plain")}, data=form))
            for data in (one, two)
        ]
        assert _blob(server, one).exists() and _blob(server, two).exists()
        _ok(client.post("/api/core/dataset/collection/delete", json={"id": created[0]["collectionId"]}))
        assert not _blob(server, one).exists() and _blob(server, two).exists()
        _ok(client.post("/api/core/dataset/delete", json={"id": dataset_id}))
    assert not _blob(server, two).exists()


def test_over_the_team_quota_is_a_413_until_files_are_deleted(
    server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    async def used(platform: Platform) -> int:
        return await platform.files.team_usage(server.boot.team_id)

    app_id = _file_app(server)
    room = QUOTA - int(server.run(used))
    with server.client(server.app_key(app_id)) as client, server.client(_team_key(server)) as team:
        big = os.urandom(room - 100)
        _ok(_upload(client, {"appId": app_id, "chatId": "q1", "customUid": "u1"}, data=big))
        over = _upload(client, {"appId": app_id, "chatId": "q2", "customUid": "u1"}, data=os.urandom(200))
        message = _refused(over, 413, "teamStorageExceeded", 413)
        assert "FATHOM_TEAM_STORAGE_QUOTA_BYTES" in message and f"may store {QUOTA}" in message
        dataset_id = _ok(team.post("/api/core/dataset/create", json={"name": f"kb {next(_names)}"}))
        doc = ("big.txt", b"x" * 200, "text/plain")
        form = {"data": f'{{"datasetId": "{dataset_id}"}}'}
        kb = team.post(LOCAL_FILE, files={"file": doc}, data=form)
        _refused(kb, 413, "teamStorageExceeded", 413)
        _chat(client, scripted, app_id, "q1")
        _ok(client.post("/api/core/chat/delHistory", json={"appId": app_id, "chatId": "q1"}))
        assert not _blob(server, big).exists()
        _ok(_upload(client, {"appId": app_id, "chatId": "q2", "customUid": "u1"}, data=os.urandom(200)))
