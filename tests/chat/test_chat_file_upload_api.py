"""Chat files end to end (spec §6): ``POST /api/core/chat/file/upload`` stores a file for an app, user and
chat and answers its key; a chat message's ``file_url`` part carrying that key reaches a readFiles node,
which reads the bytes from the store, and the model is sent the file's text. ``GET /api/files/preview``
serves the signed link: 403 for a bad or expired signature, 404 alike for a missing or made-up key.
SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from chat_support import MODEL, ChatServer, free_port, start_chat_server
from live_support import backend_database_url

from fathom.config import Settings
from fathom.security import PreviewUrlSigner
from fathom.testing import ScriptedOpenAIServer, text_turn
from workflow_json import START, edge, field

NOTES = b"The launch code word is heliotrope.\n"


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, scripted: ScriptedOpenAIServer
) -> Iterator[ChatServer]:
    root = tmp_path_factory.mktemp("chat-upload")
    database_url = backend_database_url(request, "upload")
    port = free_port()
    settings = Settings(
        data_dir=root / "data",
        database_url=database_url,
        port=port,
        workers=0,
        openai_base_url=scripted.base_url,
        chat_model=MODEL,
        public_url=f"http://127.0.0.1:{port}",
    )
    yield from start_chat_server(settings, scripted)


def _reader_app(server: ChatServer) -> str:
    """start → readFiles (the user's files) → chatNode (the files' text as its system prompt) → answer."""
    read = {
        "nodeId": "read",
        "name": "read",
        "flowNodeType": "readFiles",
        "inputs": [field("fileUrlList", ["start", "userFiles"], "arrayString", render="reference")],
        "outputs": [{"id": "system_text", "key": "system_text", "valueType": "string"}],
    }
    chat = {
        "nodeId": "llm",
        "name": "llm",
        "flowNodeType": "chatNode",
        "inputs": [
            field("model", MODEL),
            field("systemPrompt", "{{$read.system_text$}}"),
            field("history", 0, "chatHistory"),
            field("userChatInput", ["start", "userChatInput"], render="reference"),
        ],
        "outputs": [{"id": "answerText", "key": "answerText", "valueType": "string"}],
    }
    workflow = {
        "nodes": [START, read, chat],
        "edges": [edge("start", "read"), edge("read", "llm")],
        "chatConfig": {"fileSelectConfig": {"canSelectFile": True, "maxFiles": 5}},
    }
    return server.create_app({"name": "Reader", "type": "advanced", **workflow})


def _upload(
    client: httpx.Client, values: dict[str, str], name: str = "notes.txt", data: bytes = NOTES
) -> Any:
    return client.post("/api/core/chat/file/upload", files={"file": (name, data, "text/plain")}, data=values)


def test_an_uploaded_file_reaches_the_model_through_a_read_files_node(
    server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    app_id = _reader_app(server)
    app_key = server.app_key(app_id)
    with server.client(app_key) as client:
        uploaded = _upload(client, {"appId": app_id, "chatId": "c1", "customUid": "u1"})
        assert uploaded.status_code == 200, uploaded.text
        key = uploaded.json()["data"]["key"]
        assert key.startswith(f"chat/app/{app_id}/u1/c1/") and key.endswith("-notes.txt")
        scripted.clear()
        scripted.set_script([text_turn("heliotrope it is")])
        part = {"type": "file_url", "name": "notes.txt", "url": "", "key": key}
        body = {
            "appId": app_id,
            "chatId": "c1",
            "customUid": "u1",
            "messages": [{"role": "user", "content": [{"type": "text", "text": "code word?"}, part]}],
        }
        reply = client.post("/api/v1/chat/completions", json=body)
    assert reply.status_code == 200, reply.text
    assert reply.json()["choices"][0]["message"]["content"] == "heliotrope it is"
    [sent] = scripted.chat_requests
    system = sent["messages"][0]
    assert system["role"] == "system"
    assert "File: notes.txt" in system["content"] and "heliotrope" in system["content"]


def test_the_preview_link_serves_the_bytes_and_refuses_a_bad_or_expired_signature(server: ChatServer) -> None:
    app_id = _reader_app(server)
    with server.client() as client:
        data = _upload(client, {"appId": app_id, "chatId": "c2"}).json()["data"]
    url = data["previewUrl"]
    assert url.startswith(f"{server.base_url}/api/files/preview?")
    with httpx.Client(timeout=20) as anonymous:  # no credentials: the link is signed
        served = anonymous.get(url)
        assert served.status_code == 200
        assert served.content == NOTES
        assert served.headers["content-type"].startswith("text/plain")
        assert served.headers["content-disposition"] == "inline; filename*=UTF-8''notes.txt"

        tampered = anonymous.get(url.replace("sign=", "sign=0"))
        assert tampered.status_code == 403
        assert tampered.json()["statusText"] == "unAuthFile"
        assert tampered.json()["message"].endswith("Preview URL signature is invalid")
        expired = PreviewUrlSigner(server.platform.secret_key, server.base_url, expires_seconds=-10)
        late = anonymous.get(expired.sign(data["key"]))
        assert late.status_code == 403
        assert late.json()["message"].endswith("Preview URL has expired")

        signer = PreviewUrlSigner(server.platform.secret_key, server.base_url)
        made_up = anonymous.get(signer.sign(f"chat/app/{app_id}/u9/c2/{'f' * 24}-notes.txt"))
        other_name = anonymous.get(signer.sign(data["key"].replace("notes.txt", "other.txt")))
        not_a_key = anonymous.get(signer.sign("dataset/" + quote("x")))
    answers = [(r.status_code, r.json()) for r in (made_up, other_name, not_a_key)]
    assert answers[0][0] == 404 and answers[0][1]["statusText"] == "fileNotFound"
    assert answers == [answers[0]] * 3


@pytest.mark.parametrize(
    ("values", "name", "data", "message"),
    [
        ({"chatId": "c3"}, "a.txt", b"x", "appId: is required"),
        ({"appId": "{app}"}, "a.txt", b"x", "chatId: is required"),
        ({"appId": "{app}", "chatId": "c3"}, "run.exe", b"x", "file: type .exe is not allowed"),
        ({"appId": "{app}", "chatId": "a/b"}, "a.txt", b"x", "chatId: at most 128 characters"),
    ],
)
def test_a_bad_upload_is_a_400_naming_the_field(
    server: ChatServer, values: dict[str, str], name: str, data: bytes, message: str
) -> None:
    app_id = _reader_app(server)
    filled = {k: v.replace("{app}", app_id) for k, v in values.items()}
    with server.client() as client:
        response = _upload(client, filled, name, data)
    assert response.status_code == 400, response.text
    assert response.json()["message"].startswith(message)


def test_an_app_key_may_not_upload_into_another_apps_chat(server: ChatServer) -> None:
    mine, other = _reader_app(server), _reader_app(server)
    with server.client(server.app_key(mine)) as client:
        response = _upload(client, {"appId": other, "chatId": "c4"})
    assert response.status_code == 403
