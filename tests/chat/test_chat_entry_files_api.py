"""The chat entry checks the request's files before the run sees them (seed 001, spec §6.4–6.5):
external file URLs must be on the whitelisted hosts, a stored file (``key``) must belong to this app,
user and chat and reaches the run as a signed preview link; a query file that fails is a 400 naming
``messages``, a history file that fails is dropped. Through ``/api/v1/chat/completions``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from chat_support import MODEL, ChatServer, start_chat_server
from live_support import backend_settings
from test_child_app_isolation_api import _passed_history, file_lister, parent

from fathom.security import PreviewUrlSigner
from fathom.testing import ScriptedOpenAIServer
from workflow_json import START, answer, edge

ALLOWED = "https://files.example"
FOREIGN = "https://elsewhere.example"


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def files_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, scripted: ScriptedOpenAIServer
) -> Iterator[ChatServer]:
    """A server per backend (stored files are read back from the chat's items on the next turn)."""
    settings = backend_settings(
        request,
        tmp_path_factory,
        "files",
        openai_base_url=scripted.base_url,
        chat_model=MODEL,
        file_url_whitelist=["files.example"],
        public_url="https://fathom.example",
    )
    yield from start_chat_server(settings, scripted)


def _lister_app(server: ChatServer) -> str:
    workflow = {
        "nodes": [START, answer("say", "FILES={{$start.userFiles$}}")],
        "edges": [edge("start", "say")],
        "chatConfig": {"fileSelectConfig": {"canSelectFile": True, "maxFiles": 10}},
    }
    return server.create_app({"name": "Lister", "type": "advanced", **workflow})


def _file(url: str = "", key: str = "", name: str = "a.pdf") -> dict[str, Any]:
    part: dict[str, Any] = {"type": "file_url", "name": name, "url": url}
    if key:
        part["key"] = key
    return part


def _post(server: ChatServer, app_id: str, chat_id: str, messages: list[dict[str, Any]]) -> Any:
    body = {"appId": app_id, "chatId": chat_id, "customUid": "u1", "detail": True, "messages": messages}
    with server.client() as client:
        return client.post("/api/v1/chat/completions", json=body)


def _user(text: str, *files: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}, *files]}


def _files_seen(reply: dict[str, Any]) -> list[str]:
    marker = next(t for t in _files_text(reply).split("\n") if t.startswith("FILES="))
    return list(json.loads(marker.removeprefix("FILES=")))


def test_a_query_file_on_a_host_outside_the_whitelist_is_refused(files_server: ChatServer) -> None:
    app_id = _lister_app(files_server)
    response = _post(files_server, app_id, "c1", [_user("read", _file(f"{FOREIGN}/a.pdf"))])
    assert response.status_code == 400
    assert response.json()["message"] == "messages: Invalid workflow file URL"


def test_a_whitelisted_query_file_reaches_the_run_unchanged(files_server: ChatServer) -> None:
    app_id = _lister_app(files_server)
    response = _post(files_server, app_id, "c2", [_user("read", _file(f"{ALLOWED}/a.pdf"))])
    assert response.status_code == 200
    assert _files_seen(response.json()) == [f"{ALLOWED}/a.pdf"]


def test_a_stored_file_of_another_chat_or_user_is_refused(files_server: ChatServer) -> None:
    app_id = _lister_app(files_server)
    for key in (f"chat/app/{app_id}/u1/other-chat/a.pdf", f"chat/app/{app_id}/u2/c3/a.pdf"):
        response = _post(files_server, app_id, "c3", [_user("read", _file(key=key))])
        assert response.status_code == 400, key
        assert response.json()["message"] == (
            "messages: Workflow file key does not belong to the current workflow"
        )


def test_an_own_stored_file_reaches_the_run_as_a_signed_preview_link(files_server: ChatServer) -> None:
    app_id = _lister_app(files_server)
    key = f"chat/app/{app_id}/u1/c4/report.pdf"
    response = _post(files_server, app_id, "c4", [_user("read", _file(key=key))])
    assert response.status_code == 200
    [url] = _files_seen(response.json())
    assert url.startswith("https://fathom.example/api/files/preview?")
    signer = PreviewUrlSigner(files_server.platform.secret_key, "https://fathom.example")
    assert signer.verify(url) == key
    assert "sign" in parse_qs(urlsplit(url).query)


def test_history_files_that_fail_their_checks_are_dropped_before_a_child_sees_them(
    files_server: ChatServer,
) -> None:
    child = files_server.create_app({"name": "Child lister", "type": "advanced", **file_lister()})
    app_id = files_server.create_app(
        {
            "name": "Desk",
            "type": "advanced",
            **parent(child, max_files=10, tail="HISTORY={{$child.history$}}"),
        }
    )
    earlier = _user(
        "earlier",
        _file(f"{ALLOWED}/kept.pdf", name="kept.pdf"),
        _file(f"{FOREIGN}/foreign.pdf", name="foreign.pdf"),
        _file(key=f"chat/app/{app_id}/u2/c5/other-user.pdf", name="other-user.pdf"),
    )
    messages = [earlier, {"role": "assistant", "content": "ok"}, _user("now")]
    response = _post(files_server, app_id, "c5", messages)
    assert response.status_code == 200
    # the child's history: the earlier turn keeps only the whitelisted file, then the current turn
    assert _passed_history(response.json()) == [["kept.pdf"], []]


def test_a_stored_file_is_kept_by_its_key_and_checked_again_on_the_next_turn(
    files_server: ChatServer,
) -> None:
    child = files_server.create_app({"name": "Child lister", "type": "advanced", **file_lister()})
    workflow = parent(child, max_files=10, tail="HISTORY={{$child.history$}}")
    app_id = files_server.create_app({"name": "Desk", "type": "advanced", **workflow})
    key = f"chat/app/{app_id}/u1/c6/notes.pdf"
    assert _post(files_server, app_id, "c6", [_user("keep this", _file(key=key))]).status_code == 200

    with files_server.client() as client:
        records = client.post(
            "/api/core/chat/getPaginationRecords", json={"appId": app_id, "chatId": "c6", "pageSize": 10}
        ).json()["data"]["list"]
    human = next(r for r in records if r["obj"] == "Human")
    stored = [v["file"] for v in human["value"] if v["type"] == "file"]
    assert [(f.get("key"), f["url"]) for f in stored] == [(key, "")]  # what the user sent, no link

    second = _post(files_server, app_id, "c6", [_user("and now?")]).json()
    marker = next(t for t in _files_text(second).split("\n") if t.startswith("HISTORY="))
    history = json.loads(marker.removeprefix("HISTORY="))
    urls = [
        v["file"]["url"]
        for item in history
        if item["obj"] == "Human"
        for v in item["value"]
        if v.get("type") == "file"
    ]
    signer = PreviewUrlSigner(files_server.platform.secret_key, "https://fathom.example")
    assert [signer.verify(url) for url in urls] == [key]  # the stored key, signed again for this turn


def _files_text(reply: dict[str, Any]) -> str:
    content = reply["choices"][0]["message"]["content"]
    return content if isinstance(content, str) else "".join(v["text"]["content"] for v in content)
