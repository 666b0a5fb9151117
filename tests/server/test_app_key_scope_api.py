"""Issue 13 item 1. A key made with ``openapi/create {"appId": A}`` may chat with A and read its own chats,
nothing else: it can neither rewrite nor publish A (which would let it reach any knowledge base of the
team through a search node), nor read A's graph. And a run searches a knowledge base, or runs a child app,
only when the app's owner may read it, checked when the run happens: an app owned by a member who may not
read knowledge base D gets no chunk of D, whoever chats with it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from live_support import ok
from security_world import SECRET_TEXT, World, build_world, run_on, scripted, serve, wait_for_rows

from fathom.platform import Platform
from fathom.testing import ScriptedOpenAIServer
from workflow_json import edge, field, typed_answer, typed_start

__all__ = ["scripted"]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, scripted: ScriptedOpenAIServer) -> Iterator[World]:
    for server in serve(tmp_path_factory.mktemp("scope"), scripted):
        yield build_world(server, scripted)


def search_graph(dataset_id: str) -> dict[str, Any]:
    """start -> datasetSearchNode on ``dataset_id`` -> answer of the quotes."""
    start = typed_start()
    search = {
        "nodeId": "search",
        "name": "Search",
        "flowNodeType": "datasetSearchNode",
        "inputs": [
            field("datasets", [{"datasetId": dataset_id}], "selectDataset"),
            field("userChatInput", ["start", "userChatInput"]),
            field("searchMode", "fullTextRecall"),
            field("similarity", 0, "number"),
            field("limit", 1500, "number"),
        ],
        "outputs": [{"id": "quoteQA", "key": "quoteQA", "valueType": "datasetQuote", "type": "static"}],
    }
    search["inputs"][1]["renderTypeList"] = ["reference"]
    answer = typed_answer("quotes: {{$search.quoteQA$}}")
    return {
        "nodes": [start, search, answer],
        "edges": [edge("start", "search"), edge("search", "answer")],
        "chatConfig": {},
    }


def _ask(world: World, key: str, app_id: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"detail": True, "messages": [{"role": "user", "content": "quarterly numbers"}]}
    if app_id:
        body["appId"] = app_id
    with world.client(key) as client:
        reply = client.post("/api/v1/chat/completions", json=body, timeout=30)
    assert reply.status_code == 200, reply.text
    return dict(reply.json())


def _search_node(reply: dict[str, Any]) -> dict[str, Any]:
    return next(r for r in reply["responseData"] if r["moduleType"] == "datasetSearchNode")


def test_an_app_key_can_neither_rewrite_nor_publish_its_app(world: World) -> None:
    graph = search_graph(world.dataset_id)
    with world.client(world.app_key) as client:
        for path, body in [
            ("/api/core/app/update", {"appId": world.app_id, **graph}),
            ("/api/core/app/version/publish", {"appId": world.app_id, **graph}),
            ("/api/core/app/update", {"appId": world.app_id, "name": "renamed"}),
        ]:
            refused = client.post(path, json=body)
            assert refused.status_code == 403, (path, refused.text)
            assert refused.json()["statusText"] == "unAuthApp"
    with world.client(world.server.admin_key) as client:
        detail = ok(client.get("/api/core/app/detail", params={"appId": world.app_id}))
        assert detail["name"] == "Bot"
        assert "datasetSearchNode" not in {n["flowNodeType"] for n in detail["nodes"]}
        versions = ok(client.post("/api/core/app/version/list", json={"appId": world.app_id}))
        assert [v["_id"] for v in versions["list"]] == [world.version_id]
    reply = _ask(world, world.app_key)
    assert SECRET_TEXT not in str(reply)


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/api/core/app/detail", {}),
        ("GET", "/api/core/app/exportWorkflow", {}),
        ("POST", "/api/core/app/version/list", {}),
        ("GET", "/api/core/app/version/latest", {}),
        ("GET", "/api/core/app/version/detail", {"versionId": "VERSION"}),
        ("POST", "/api/core/app/copy", {}),
        ("DELETE", "/api/core/app/del", {}),
        (
            "POST",
            "/api/core/chat/chatTest",
            {"messages": [{"role": "user", "content": "x"}], "stream": False},
        ),
    ],
)
def test_an_app_key_reads_nothing_of_its_app_but_chats(
    world: World, method: str, path: str, body: dict[str, Any]
) -> None:
    values = {
        "appId": world.app_id,
        **{k: world.version_id if v == "VERSION" else v for k, v in body.items()},
    }
    with world.client(world.app_key) as client:
        if method in ("GET", "DELETE"):
            refused = client.request(method, path, params=values)
        else:
            refused = client.request(method, path, json=values)
    assert refused.status_code == 403, refused.text
    assert refused.json()["statusText"] == "unAuthApp"
    assert world.app_id in refused.json()["message"]


def test_an_app_key_reads_its_own_chats(world: World) -> None:
    with world.client(world.app_key) as client:
        chats = ok(client.post("/api/core/chat/getHistories", json={"appId": world.app_id}))
        assert world.chat_id in [c["chatId"] for c in chats["list"]]
        records = ok(
            client.post(
                "/api/core/chat/getPaginationRecords", json={"appId": world.app_id, "chatId": world.chat_id}
            )
        )
        assert [r["obj"] for r in records["list"]] == ["Human", "AI"]


def _member_with_key(world: World, name: str) -> tuple[str, str]:
    team = world.server.boot.team_id

    async def make(platform: Platform) -> tuple[str, str]:
        member = await platform.teams.add_member(team, name, "member")
        _, key = await platform.api_keys.create_key(team, member.id)
        return member.id, key

    member_id, key = run_on(world.server, make)
    return str(member_id), str(key)


def _grant(world: World, member_id: str, permission: Any) -> None:
    async def grant(platform: Platform) -> None:
        await platform.teams.set_permission(member_id, "dataset", world.dataset_id, permission)

    run_on(world.server, grant)


def test_a_run_searches_only_knowledge_bases_the_apps_owner_may_read(world: World) -> None:
    """Mel (a member who may not read D) builds an app searching D. The team owner, who may read D,
    chats with it: the search node fails and no chunk of D comes back, because Mel owns the app."""
    mel_id, mel_key = _member_with_key(world, "mel")
    with world.client(mel_key) as client:
        refused = client.post(
            "/api/core/dataset/searchTest", json={"datasetId": world.dataset_id, "text": "x"}
        )
        assert refused.status_code == 403
        app_id = ok(
            client.post(
                "/api/core/app/create",
                json={"name": "Mel's", "type": "advanced", **search_graph(world.dataset_id)},
            )
        )

    reply = _ask(world, world.server.admin_key, app_id)
    node = _search_node(reply)
    assert node["error"].startswith("No read permission on knowledge base"), node
    assert world.dataset_id in node["error"] and "owner" in node["error"]
    assert SECRET_TEXT not in str(reply)

    _grant(world, mel_id, "read")  # checked when the run happens, not when the app was saved
    node = _search_node(_ask(world, world.server.admin_key, app_id))
    assert "error" not in node and SECRET_TEXT in node["quoteList"][0]["q"]

    _grant(world, mel_id, None)
    reply = _ask(world, world.server.admin_key, app_id)
    assert _search_node(reply)["error"].startswith("No read permission on knowledge base")
    assert SECRET_TEXT not in str(reply)


def test_a_run_needs_the_chatting_member_to_read_the_knowledge_base_too(world: World) -> None:
    """The team owner's app searching D, shared (read) with a member who may not read D: that member's
    chat gets no chunk of D either."""
    with world.client(world.server.admin_key) as client:
        app_id = ok(
            client.post(
                "/api/core/app/create",
                json={"name": "Shared", "type": "advanced", **search_graph(world.dataset_id)},
            )
        )
    member_id, key = _member_with_key(world, "sam")

    async def share(platform: Platform) -> None:
        await platform.teams.set_permission(member_id, "app", app_id, "read")

    run_on(world.server, share)
    reply = _ask(world, key, app_id)
    assert _search_node(reply)["error"].startswith("No read permission on knowledge base")
    assert SECRET_TEXT not in str(reply)
    owner_reply = _ask(world, world.server.admin_key, app_id)
    assert SECRET_TEXT in _search_node(owner_reply)["quoteList"][0]["q"]


def test_a_run_reads_a_knowledge_base_through_a_grant_on_its_folder_or_the_owners_admin_role(
    world: World,
) -> None:
    """A knowledge base inside a folder: the app's owner (a plain member) may let a run search it by a read
    grant on the folder, not only on the knowledge base; and as a team admin, with no grant at all."""
    ledger = "Ledger entry: the quarterly numbers of the finance folder."
    with world.client(world.server.admin_key) as client:
        folder = ok(client.post("/api/core/dataset/create", json={"name": "Finance", "type": "folder"}))
        kb = ok(client.post("/api/core/dataset/create", json={"name": "Ledger", "parentId": folder}))
        body = {"datasetId": kb, "name": "ledger", "text": ledger}
        wait_for_rows(
            client, ok(client.post("/api/core/dataset/collection/create/text", json=body))["collectionId"]
        )
    member_id, key = _member_with_key(world, "fay")
    team = world.server.boot.team_id

    def on_folder(permission: Any) -> None:
        async def grant(platform: Platform) -> None:
            await platform.teams.set_permission(member_id, "dataset", folder, permission)

        run_on(world.server, grant)

    on_folder("read")
    with world.client(key) as client:
        app_id = ok(
            client.post(
                "/api/core/app/create", json={"name": "Fay's", "type": "advanced", **search_graph(kb)}
            )
        )
    node = _search_node(_ask(world, world.server.admin_key, app_id))
    assert "error" not in node and node["quoteList"][0]["q"] == ledger

    on_folder(None)
    node = _search_node(_ask(world, world.server.admin_key, app_id))
    assert node["error"].startswith("No read permission on knowledge base") and kb in node["error"]

    async def promote(platform: Platform) -> None:
        await platform.teams.set_role(team, member_id, "admin")

    run_on(world.server, promote)
    node = _search_node(_ask(world, world.server.admin_key, app_id))
    assert "error" not in node and node["quoteList"][0]["q"] == ledger


def test_an_app_key_uses_only_its_own_chats(world: World) -> None:
    """Another member's chat of the same app is, for the app key, a chat that does not exist."""
    ann_id, ann_key = _member_with_key(world, "ann")

    async def share(platform: Platform) -> None:
        await platform.teams.set_permission(ann_id, "app", world.app_id, "read")

    run_on(world.server, share)
    private = {"appId": world.app_id, "chatId": "ann-private"}
    with world.client(ann_key) as client:
        said = client.post(
            "/api/v1/chat/completions",
            json={**private, "messages": [{"role": "user", "content": "my salary is 4242"}]},
        )
        assert said.status_code == 200, said.text
    with world.client(world.app_key) as client:
        records = ok(client.post("/api/core/chat/getPaginationRecords", json=private))
        assert records == {"list": [], "total": 0}
        init = ok(client.get("/api/core/chat/init", params=private))
        assert init["title"] is None and init["variables"] == {}
        chats = ok(client.post("/api/core/chat/getHistories", json={"appId": world.app_id}))
        assert "ann-private" not in [c["chatId"] for c in chats["list"]]
        renamed = client.post("/api/core/chat/updateHistory", json={**private, "customTitle": "mine"})
        assert renamed.status_code == 404 and renamed.json()["statusText"] == "unAuthChat"
        message = renamed.json()["message"]
        assert message == "No permission to use this chat record: chat ann-private not found"
        # deleting a chat that does not exist is FastGPT's no-op success: another's chat answers the same
        deleted = client.post("/api/core/chat/delHistory", json=private)
        made_up = client.post("/api/core/chat/delHistory", json={**private, "chatId": "no-such-chat"})
        assert deleted.status_code == made_up.status_code == 200
        assert deleted.json() == made_up.json()
        taken = client.post(
            "/api/v1/chat/completions", json={**private, "messages": [{"role": "user", "content": "hi"}]}
        )
        assert taken.status_code == 403 and taken.json()["statusText"] == "unAuthChat"
        stopped = ok(client.post("/api/v2/chat/stop", json=private))
        assert stopped == {"success": False}
        ok(client.post("/api/core/chat/clearHistories", json={"appId": world.app_id}))
    with world.client(ann_key) as client:
        kept = ok(client.post("/api/core/chat/getPaginationRecords", json=private))
        assert kept["total"] == 2 and "4242" in str(kept["list"][0])


def test_an_editor_saves_only_knowledge_bases_they_may_read(world: World) -> None:
    """A member who may write the owner's app but not read D cannot put D into it: the app runs with its
    owner's permissions, which would reach D for everyone chatting with it."""
    with world.client(world.server.admin_key) as client:
        body = {"name": "Team desk", "type": "simple", "simpleConfig": {"model": "scripted-chat"}}
        app_id = ok(client.post("/api/core/app/create", json=body))
    editor_id, editor_key = _member_with_key(world, "eddie")

    async def may_write(platform: Platform) -> None:
        await platform.teams.set_permission(editor_id, "app", app_id, "write")

    run_on(world.server, may_write)
    graph = search_graph(world.dataset_id)
    with world.client(editor_key) as client:
        for path in ("/api/core/app/update", "/api/core/app/version/publish"):
            refused = client.post(path, json={"appId": app_id, **graph})
            assert refused.status_code == 403, refused.text
            assert f"read dataset {world.dataset_id}" in refused.json()["message"]
        saved = client.post("/api/core/app/update", json={"appId": app_id, "intro": "no graph change"})
        assert ok(saved) == {"problems": []}  # saved; the draft's workflow checks find nothing
    _grant(world, editor_id, "read")
    with world.client(editor_key) as client:
        assert ok(client.post("/api/core/app/update", json={"appId": app_id, **graph})) == {"problems": []}
