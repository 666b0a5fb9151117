"""Every route of the API (the OpenAPI document's paths, checked to be all listed here) tried, on SQLite and
on PostgreSQL, with four callers (issue 13):

- a key of **another team**: every id of ours is answered exactly as a made-up id (same status, statusText
  and message once the id it was sent is blanked out): 404, so no id's existence leaks, and no second id;
- a **member without permission**: 403 on every knowledge base and app of the team;
- a **read-only member** (read on the knowledge base and the app): reads pass, writes are 403; it chats
  and manages chats of its own (which chats a caller may touch is tests/server/test_chat_ownership_matrix.py);
- an **app key** (``openapi/create {"appId": A}``): chatting with A and its own chats pass, everything else
  (A's detail, graph, versions, publish, chat test, every knowledge base route, keys, usage) is 403;
- **console sessions** (issue 19): the read-only member signed in by password is answered as its key is;
  the owner's session reads, chats and makes keys; a cookie request without its CSRF token is refused on
  every route.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from live_support import backend_database_url
from security_world import World, build_world, last_answer_id, scripted, serve

from fathom.testing import ScriptedOpenAIServer

__all__ = ["scripted"]

FAKE = "f" * 24
_OBJECT_ID = re.compile(r"\b[0-9a-f]{24}\b")
_scratch = itertools.count()


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, scripted: ScriptedOpenAIServer
) -> Iterator[World]:
    database_url = backend_database_url(request, "matrix")
    for server in serve(tmp_path_factory.mktemp(f"matrix-{request.param}"), scripted, database_url):
        yield build_world(server, scripted)


# What a route touches, which decides who may call it:
#   read / write / manage: a knowledge base or app resource at that level;
#   chat / chat-write: the app's chat side, for anyone who may read the app (an app key of that app too);
#     a route naming a chat is tried on a chat of the caller's own (its owner may do anything with it)
#   keys: owners' and admins' team-wide key and usage routes.
READ, WRITE, MANAGE, CHAT, CHAT_WRITE, KEYS = "read", "write", "manage", "chat", "chat-write", "keys"
Body = Callable[[World], dict[str, Any]]


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    body: Body
    kind: str
    multipart: bool = False


def _msg(text: str = "x") -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def _chat(w: World) -> dict[str, Any]:
    return {"appId": w.app_id, "chatId": w.chat_id}


ROUTES: list[Route] = [
    # knowledge bases
    Route("GET", "/api/core/dataset/detail", lambda w: {"id": w.dataset_id}, READ),
    Route(
        "POST", "/api/core/dataset/searchTest", lambda w: {"datasetId": w.dataset_id, "text": "numbers"}, READ
    ),
    Route("POST", "/api/core/dataset/update", lambda w: {"id": w.dataset_id, "intro": "changed"}, MANAGE),
    Route("DELETE", "/api/core/dataset/delete", lambda w: {"id": w.dataset_id}, MANAGE),
    Route("GET", "/api/core/dataset/paths", lambda w: {"parentId": w.dataset_id}, READ),
    Route("POST", "/api/core/dataset/collection/listV2", lambda w: {"datasetId": w.dataset_id}, READ),
    # tags of the knowledge base's collections
    Route(
        "POST",
        "/api/core/dataset/tag/create",
        lambda w: {"datasetId": w.dataset_id, "tag": f"tag {next(_scratch)}"},
        WRITE,
    ),
    Route(
        "POST",
        "/api/core/dataset/tag/update",
        lambda w: {"datasetId": w.dataset_id, "tagId": w.tag_id, "tag": f"renamed {next(_scratch)}"},
        WRITE,
    ),
    Route("POST", "/api/core/dataset/tag/list", lambda w: {"datasetId": w.dataset_id, "pageSize": 10}, READ),
    Route("GET", "/api/core/dataset/tag/getAllTags", lambda w: {"datasetId": w.dataset_id}, READ),
    Route("GET", "/api/core/dataset/tag/tagUsage", lambda w: {"datasetId": w.dataset_id}, READ),
    Route(
        "POST",
        "/api/core/dataset/tag/addToCollections",
        lambda w: {"datasetId": w.dataset_id, "tag": w.tag_id, "collectionIds": [w.collection_id]},
        WRITE,
    ),
    Route(
        "DELETE",
        "/api/core/dataset/tag/delete",
        lambda w: {"id": w.tag_id, "datasetId": w.dataset_id},
        MANAGE,
    ),
    Route("GET", "/api/core/dataset/collection/detail", lambda w: {"id": w.collection_id}, READ),
    Route(
        "GET",
        "/api/core/dataset/collection/trainingDetail",
        lambda w: {"collectionId": w.collection_id},
        READ,
    ),
    Route(
        "POST",
        "/api/core/dataset/collection/create",
        lambda w: {"datasetId": w.dataset_id, "name": "x"},
        WRITE,
    ),
    Route(
        "POST",
        "/api/core/dataset/collection/create/text",
        lambda w: {"datasetId": w.dataset_id, "name": "x", "text": "y"},
        WRITE,
    ),
    Route(
        "POST",
        "/api/core/dataset/collection/create/link",
        lambda w: {"datasetId": w.dataset_id, "link": "https://example.com"},
        WRITE,
    ),
    Route(
        "POST",
        "/api/core/dataset/collection/create/localFile",
        lambda w: {"datasetId": w.dataset_id},
        WRITE,
        multipart=True,
    ),
    Route("POST", "/api/core/dataset/apiDataset/list", lambda w: {"datasetId": w.api_dataset_id}, READ),
    Route(
        "POST",
        "/api/core/dataset/collection/create/apiCollection",
        lambda w: {"datasetId": w.api_dataset_id, "apiFileId": "doc-1", "name": "Policy copy.md"},
        WRITE,
    ),
    Route(
        "POST", "/api/core/dataset/collection/sync", lambda w: {"collectionId": w.api_collection_id}, WRITE
    ),
    Route("POST", "/api/core/dataset/sync", lambda w: {"datasetId": w.api_dataset_id}, WRITE),
    Route("POST", "/api/core/dataset/syncHistory", lambda w: {"datasetId": w.api_dataset_id}, READ),
    Route(
        "POST",
        "/api/core/dataset/training/updateTrainingData",
        lambda w: {"collectionId": w.collection_id},
        WRITE,
    ),
    Route(
        "GET",
        "/api/core/dataset/training/getDatasetTrainingQueue",
        lambda w: {"datasetId": w.dataset_id},
        READ,
    ),
    Route(
        "POST",
        "/api/core/dataset/training/getTrainingError",
        lambda w: {"collectionId": w.collection_id},
        READ,
    ),
    Route(
        "POST",
        "/api/core/dataset/training/getTrainingDataDetail",
        lambda w: {"datasetId": w.dataset_id, "collectionId": w.collection_id, "dataId": FAKE},
        READ,
    ),
    Route(
        "POST",
        "/api/core/dataset/training/deleteTrainingData",
        lambda w: {"datasetId": w.dataset_id, "collectionId": w.collection_id, "dataId": FAKE},
        WRITE,
    ),
    Route(
        "PUT", "/api/core/dataset/collection/update", lambda w: {"id": w.collection_id, "tags": ["x"]}, WRITE
    ),
    Route(
        "POST",
        "/api/support/wallet/usage/createTrainingUsage",
        lambda w: {"datasetId": w.dataset_id, "name": "import"},
        WRITE,
    ),
    Route(
        "POST", "/api/core/dataset/collection/delete", lambda w: {"collectionIds": [w.collection_id]}, WRITE
    ),
    Route("DELETE", "/api/core/dataset/collection/delete", lambda w: {"id": w.collection_id}, WRITE),
    Route(
        "POST",
        "/api/core/dataset/file/getPreviewChunks",
        lambda w: {"datasetId": w.dataset_id, "text": "one. two."},
        READ,
    ),
    Route("POST", "/api/core/dataset/data/v2/list", lambda w: {"collectionId": w.collection_id}, READ),
    Route("GET", "/api/core/dataset/data/detail", lambda w: {"id": w.data_id}, READ),
    Route(
        "POST",
        "/api/core/dataset/data/insertData",
        lambda w: {"collectionId": w.collection_id, "q": "x"},
        WRITE,
    ),
    Route(
        "POST",
        "/api/core/dataset/data/pushData",
        lambda w: {"collectionId": w.collection_id, "data": [{"q": "x"}]},
        WRITE,
    ),
    Route("PUT", "/api/core/dataset/data/update", lambda w: {"dataId": w.data_id, "q": "changed"}, WRITE),
    Route("DELETE", "/api/core/dataset/data/delete", lambda w: {"id": w.data_id}, WRITE),
    Route("GET", "/api/core/dataset/collaborator/list", lambda w: {"datasetId": w.dataset_id}, READ),
    Route(
        "POST",
        "/api/core/dataset/collaborator/update",
        lambda w: {"datasetId": w.dataset_id, "tmbIds": [w.stranger_id], "permission": "read"},
        MANAGE,
    ),
    Route(
        "DELETE",
        "/api/core/dataset/collaborator/delete",
        lambda w: {"datasetId": w.dataset_id, "tmbId": w.stranger_id},
        MANAGE,
    ),
    # apps
    Route("GET", "/api/core/app/detail", lambda w: {"appId": w.app_id}, READ),
    Route("POST", "/api/core/app/update", lambda w: {"appId": w.app_id, "intro": "changed"}, WRITE),
    Route("DELETE", "/api/core/app/del", lambda w: {"appId": w.app_id}, MANAGE),
    Route("GET", "/api/core/app/collaborator/list", lambda w: {"appId": w.app_id}, READ),
    Route(
        "POST",
        "/api/core/app/collaborator/update",
        lambda w: {"appId": w.app_id, "tmbIds": [w.stranger_id], "permission": "read"},
        MANAGE,
    ),
    Route(
        "DELETE",
        "/api/core/app/collaborator/delete",
        lambda w: {"appId": w.app_id, "tmbId": w.stranger_id},
        MANAGE,
    ),
    Route("POST", "/api/core/app/copy", lambda w: {"appId": w.app_id}, READ),
    Route("GET", "/api/core/app/exportWorkflow", lambda w: {"appId": w.app_id}, READ),
    Route("POST", "/api/core/app/version/publish", lambda w: {"appId": w.app_id}, WRITE),
    Route("POST", "/api/core/app/version/list", lambda w: {"appId": w.app_id}, READ),
    Route(
        "GET", "/api/core/app/version/detail", lambda w: {"appId": w.app_id, "versionId": w.version_id}, READ
    ),
    Route("GET", "/api/core/app/version/latest", lambda w: {"appId": w.app_id}, READ),
    Route(
        "POST",
        "/api/core/chat/chatTest",
        lambda w: {"appId": w.app_id, "messages": _msg(), "stream": False},
        WRITE,
    ),
    # team tool sets (apps of type toolSet / httpToolSet); running a stored tool needs write on the set
    Route("GET", "/api/core/app/mcpTools/getChildren", lambda w: {"id": w.mcp_set_id}, READ),
    Route("GET", "/api/core/app/httpTools/getChildren", lambda w: {"id": w.http_set_id}, READ),
    Route(
        "POST",
        "/api/core/app/mcpTools/runTool",
        lambda w: {"appId": w.mcp_set_id, "toolName": "lookup", "params": {}},
        WRITE,
    ),
    Route(
        "POST",
        "/api/core/app/httpTools/runTool",
        lambda w: {"appId": w.http_set_id, "toolName": "lookup", "params": {}},
        WRITE,
    ),
    Route(
        "POST",
        "/api/core/app/mcpTools/update",
        lambda w: {"appId": w.mcp_set_id, "url": "http://127.0.0.1:9/mcp", "toolList": [{"name": "x"}]},
        MANAGE,
    ),
    Route(
        "POST", "/api/core/app/httpTools/update", lambda w: {"appId": w.http_set_id, "baseUrl": ""}, MANAGE
    ),
    # the chat side of an app
    Route("POST", "/api/v1/chat/completions", lambda w: {"appId": w.app_id, "messages": _msg()}, CHAT),
    Route("POST", "/api/v2/chat/completions", lambda w: {"appId": w.app_id, "messages": _msg()}, CHAT),
    Route("POST", "/api/v2/chat/stop", _chat, CHAT),
    Route("POST", "/api/core/chat/file/upload", _chat, CHAT, multipart=True),
    Route("POST", "/api/v2/chat/resume", _chat, CHAT),
    Route("POST", "/api/core/chat/getHistories", lambda w: {"appId": w.app_id}, CHAT),
    Route("POST", "/api/core/ai/agent/v2/createQuestionGuide", _chat, CHAT),
    Route("GET", "/api/core/chat/init", _chat, CHAT),
    Route("POST", "/api/core/chat/getPaginationRecords", _chat, CHAT),
    Route("GET", "/api/core/chat/getResData", lambda w: {**_chat(w), "dataId": "none"}, CHAT),
    Route(
        "POST",
        "/api/core/chat/feedback/updateUserFeedback",
        lambda w: {**_chat(w), "dataId": w.answer_id, "userGoodFeedback": "yes"},
        CHAT,
    ),
    Route("POST", "/api/core/chat/updateHistory", lambda w: {**_chat(w), "top": True}, CHAT_WRITE),
    # an app's chat logs and the owner's marks: for those who manage the app
    Route("POST", "/api/core/app/getChatLogs", lambda w: {"appId": w.app_id}, MANAGE),
    Route("POST", "/api/core/app/exportChatLogs", lambda w: {"appId": w.app_id}, MANAGE),
    Route(
        "POST",
        "/api/core/chat/feedback/adminUpdate",
        lambda w: {**_chat(w), "dataId": w.answer_id, "q": "question", "a": "corrected"},
        MANAGE,
    ),
    Route(
        "DELETE", "/api/core/chat/item/delete", lambda w: {**_chat(w), "contentId": w.answer_id}, CHAT_WRITE
    ),
    Route("POST", "/api/core/chat/delHistory", _chat, CHAT_WRITE),
    Route("POST", "/api/core/chat/clearHistories", lambda w: {"appId": w.app_id}, CHAT_WRITE),
    # share links of the app (managers of the app)
    Route("POST", "/api/support/outLink/create", lambda w: {"appId": w.app_id, "name": "x"}, MANAGE),
    Route("GET", "/api/support/outLink/list", lambda w: {"appId": w.app_id}, MANAGE),
    Route("POST", "/api/support/outLink/update", lambda w: {"_id": w.share_link_id, "name": "y"}, MANAGE),
    Route("DELETE", "/api/support/outLink/delete", lambda w: {"id": w.share_link_id}, MANAGE),
    # keys and usage (owners and admins with a team-wide key)
    Route("POST", "/api/support/openapi/create", lambda w: {"name": "k", "appId": w.app_id}, KEYS),
]
IDS = [f"{r.method} {r.path}" for r in ROUTES]

# Routes without an id of ours: who may call them is checked in test_team_routes below.
TEAM_ROUTES: dict[str, tuple[str, dict[str, Any]]] = {
    "/api/health": ("GET", {}),
    "/api/v1/whoami": ("GET", {}),
    "/api/core/dataset/create": ("POST", {"name": "mine"}),
    "/api/core/dataset/list": ("POST", {}),
    "/api/core/app/create": ("POST", {"name": "mine"}),
    "/api/core/app/importWorkflow": ("POST", {"name": "mine", "nodes": [], "edges": []}),
    "/api/core/app/list": ("POST", {}),
    "/api/core/ai/model/list": ("GET", {}),
    "/api/core/ai/agent/createQuestionGuide": ("POST", {"messages": [{"role": "user", "content": "hello"}]}),
    "/api/v1/models": ("GET", {}),  # OpenAI's list: whoever may chat may list (issue 31)
    "/v1/models": ("GET", {}),
    "/api/core/app/template/list": ("GET", {}),
    "/api/core/app/template/detail": ("GET", {"templateId": "none"}),
    "/api/core/app/plugin/getSystemPluginTemplates": ("GET", {}),
    "/api/core/app/mcpTools/create": ("POST", {"name": "mine", "url": "http://127.0.0.1:9/mcp"}),
    "/api/core/app/mcpTools/getTools": ("POST", {"url": "http://127.0.0.1:9/mcp"}),
    "/api/core/app/httpTools/create": ("POST", {"name": "mine"}),
    "/api/support/openapi/list": ("GET", {}),
    "/api/support/openapi/delete": ("DELETE", {"id": FAKE}),
    "/api/support/usage/summary": ("GET", {}),
    "/api/support/user/team/member/list": ("GET", {}),
    "/api/support/user/team/member/create": ("POST", {"username": "newbie", "password": "x" * 8}),
    "/api/support/user/team/member/updateRole": ("POST", {"tmbId": FAKE, "role": "member"}),
    "/api/support/user/team/member/delete": ("DELETE", {"tmbId": FAKE}),
    "/api/support/user/team/invitation/create": ("POST", {"role": "member"}),
    "/api/support/user/team/invitation/list": ("GET", {}),
    "/api/support/user/team/invitation/delete": ("DELETE", {"id": FAKE}),
}
# Account routes every caller reaches: what an app key and what a member's key are answered. Signing in
# and the invitation link need no credentials (the wrong password and the unknown link answer the
# same to everyone); a key has no session to end and, for the app key, no business with passwords.
SELF_ROUTES: dict[str, tuple[str, dict[str, Any], int, int]] = {
    "/api/support/user/account/loginByPassword": (
        "POST",
        {"username": "x", "password": "wrong one"},
        401,
        401,
    ),
    "/api/support/user/account/tokenLogin": ("GET", {}, 200, 200),
    "/api/support/user/account/loginout": ("POST", {}, 403, 400),
    "/api/support/user/account/updatePasswordByOld": ("POST", {"oldPsw": "no", "newPsw": "x" * 8}, 403, 400),
    "/api/support/user/team/invitation/info": ("GET", {"token": "none"}, 410, 410),
    # a share page: no credentials needed, an unknown link is unknown to everyone
    "/api/core/chat/outLink/init": ("GET", {"shareId": "none", "outLinkUid": "visitor"}, 404, 404),
    "/api/support/user/team/invitation/accept": (
        "POST",
        {"token": "none", "username": "joiner", "password": "x" * 8},
        410,
        410,
    ),
}


def test_every_route_of_the_api_is_in_the_matrix(world: World) -> None:
    with world.client(world.server.admin_key) as client:
        paths = set(client.get("/openapi.json").json()["paths"])
    assert paths == {r.path for r in ROUTES} | set(TEAM_ROUTES) | set(SELF_ROUTES)


def call(client: httpx.Client, route: Route, values: dict[str, Any]) -> httpx.Response:
    if route.multipart:
        import json

        files = {"file": ("notes.txt", b"some notes", "text/plain")}
        return client.post(route.path, files=files, data={"data": json.dumps(values)})
    if route.method in ("GET", "DELETE"):
        return client.request(route.method, route.path, params=values)
    return client.request(route.method, route.path, json=values)


def made_up(values: dict[str, Any]) -> dict[str, Any]:
    def fake(value: Any) -> Any:
        if isinstance(value, list):
            return [fake(item) for item in value]
        return FAKE if isinstance(value, str) and _OBJECT_ID.fullmatch(value) else value

    return {k: fake(v) for k, v in values.items()}


def blanked(response: httpx.Response) -> tuple[int, str, str, Any]:
    """Status, statusText, message (every 24-hex id blanked) and data of an answer."""
    body = response.json()
    return response.status_code, body["statusText"], _OBJECT_ID.sub("<id>", body["message"]), body["data"]


#: routes outside /api/core/dataset/ that are about a knowledge base (FastGPT's authDataset)
DATASET_ROUTES = ("/api/support/wallet/usage/createTrainingUsage",)


def refusal(path: str) -> str:
    """FastGPT's "not authorised" statusText for the resource a route is about."""
    if path.startswith("/api/core/dataset/") or path in DATASET_ROUTES:
        return "unAuthDataset"
    if path.startswith("/api/support/") and not path.startswith("/api/support/outLink/"):
        return "openapiUnAuth"
    return "unAuthApp"


def missing(path: str) -> str:
    """FastGPT's "does not exist" statusText for the record a route names first ("" = its generic
    error, ``Data not found`` for a data row)."""
    if path in (
        "/api/core/dataset/data/detail",
        "/api/core/dataset/data/update",
        "/api/core/dataset/data/delete",
    ):
        return ""
    collection_first = (
        "/api/core/dataset/collection/",
        "/api/core/dataset/training/",
        "/api/core/dataset/data/",
    )
    dataset_first = ("/collection/create", "listV2", "getDatasetTrainingQueue")
    if path.startswith(collection_first) and not any(part in path for part in dataset_first):
        return "unExistCollection"
    if path in ("/api/support/outLink/update", "/api/support/outLink/delete"):
        return "outlinkUnExist"
    dataset_first = path.startswith("/api/core/dataset/") or path in DATASET_ROUTES
    return "unExistDataset" if dataset_first else "appUnExist"


def assert_refused(response: httpx.Response) -> None:
    assert response.status_code == 403, response.text
    assert response.json()["statusText"] == refusal(response.request.url.path), response.text


def assert_allowed(response: httpx.Response) -> None:
    assert response.status_code == 200, response.text
    if response.headers.get("content-type", "").startswith("application/json"):
        assert response.json().get("code", 200) == 200, response.text


def on_own_chat(client: httpx.Client, world: World, route: Route, values: dict[str, Any]) -> dict[str, Any]:
    """A chat route's body aimed at a chat of the caller's own, made just now: which chats a caller may
    touch is the ownership rule's (tests/server/test_chat_ownership_matrix.py); here the app's."""
    if route.kind not in (CHAT, CHAT_WRITE) or "chatId" not in values:
        return values
    chat_id = f"scratch-{next(_scratch)}"
    reply = client.post(
        "/api/v1/chat/completions", json={"appId": world.app_id, "chatId": chat_id, "messages": _msg()}
    )
    assert reply.status_code == 200, reply.text
    answer = last_answer_id(client, world.app_id, chat_id)
    values = {**values, "chatId": chat_id}
    return {**values, **{k: answer for k in ("contentId", "dataId") if values.get(k) == world.answer_id}}


@pytest.mark.parametrize("route", ROUTES, ids=IDS)
def test_another_teams_key_finds_our_ids_exactly_as_made_up_ones(world: World, route: Route) -> None:
    values = route.body(world)
    with world.client(world.other_team_key) as client:
        ours = call(client, route, values)
        fake = call(client, route, made_up(values))
    assert ours.status_code == 404, ours.text
    assert ours.json()["statusText"] == missing(route.path)
    assert blanked(ours) == blanked(fake)
    assert ours.json()["message"].count(FAKE) == 0
    sent = {v for v in values.values() if isinstance(v, str)} | {
        item for v in values.values() if isinstance(v, list) for item in v if isinstance(item, str)
    }
    leaked = set(_OBJECT_ID.findall(ours.text)) - sent
    assert not leaked, f"the answer names ids the caller never sent: {leaked}"


@pytest.mark.parametrize("route", ROUTES, ids=IDS)
def test_a_member_without_permission_is_refused(world: World, route: Route) -> None:
    with world.client(world.stranger_key) as client:
        assert_refused(call(client, route, route.body(world)))


@pytest.mark.parametrize(
    "route",
    [r for r in ROUTES if r.kind != MANAGE],
    ids=[i for r, i in zip(ROUTES, IDS, strict=True) if r.kind != MANAGE],
)
def test_a_read_only_member_reads_but_does_not_write(world: World, route: Route) -> None:
    """... and chats, and manages the chats of its own."""
    with world.client(world.reader_key) as client:
        response = call(client, route, on_own_chat(client, world, route, route.body(world)))
    if route.kind in (READ, CHAT, CHAT_WRITE):
        assert_allowed(response)
    else:
        assert_refused(response)


@pytest.mark.parametrize(
    "route",
    [r for r in ROUTES if r.kind == MANAGE],
    ids=[i for r, i in zip(ROUTES, IDS, strict=True) if r.kind == MANAGE],
)
def test_a_read_only_member_may_not_manage(world: World, route: Route) -> None:
    with world.client(world.reader_key) as client:
        assert_refused(call(client, route, route.body(world)))


# Sessions: a password sign-in builds the same identity as a key of that member, so the rules above hold
# for cookie requests too; and no cookie request gets past without its CSRF token. (Before the app key's
# tests: those clear the chat of the app that the CHAT routes here use.)


@pytest.fixture(scope="module")
def reader_session(world: World) -> Iterator[httpx.Client]:
    client = world.reader_session()
    yield client
    client.close()


@pytest.fixture(scope="module")
def owner_session(world: World) -> Iterator[httpx.Client]:
    client = world.owner_session()
    yield client
    client.close()


@pytest.mark.parametrize("route", ROUTES, ids=IDS)
def test_a_read_only_members_session_reads_but_does_not_write(
    world: World, reader_session: httpx.Client, route: Route
) -> None:
    response = call(reader_session, route, on_own_chat(reader_session, world, route, route.body(world)))
    if route.kind in (READ, CHAT, CHAT_WRITE):
        assert_allowed(response)
    else:
        assert_refused(response)


@pytest.mark.parametrize(
    "route",
    [r for r in ROUTES if r.kind in (READ, CHAT, KEYS)],
    ids=[i for r, i in zip(ROUTES, IDS, strict=True) if r.kind in (READ, CHAT, KEYS)],
)
def test_an_owners_session_may_read_chat_and_make_keys(
    world: World, owner_session: httpx.Client, route: Route
) -> None:
    assert_allowed(call(owner_session, route, on_own_chat(owner_session, world, route, route.body(world))))


@pytest.fixture(scope="module")
def owner_session_without_csrf(world: World) -> Iterator[httpx.Client]:
    client = world.owner_session(csrf=False)
    yield client
    client.close()


@pytest.mark.parametrize("route", ROUTES, ids=IDS)
def test_a_cookie_request_without_the_csrf_token_is_refused(
    world: World, owner_session_without_csrf: httpx.Client, route: Route
) -> None:
    response = call(owner_session_without_csrf, route, route.body(world))
    assert response.status_code == 403, response.text
    assert response.json()["statusText"] == "csrfTokenInvalid"


@pytest.mark.parametrize("route", ROUTES, ids=IDS)
def test_an_app_key_may_only_chat_with_its_app(world: World, route: Route) -> None:
    values = route.body(world)
    with world.client(world.app_key) as client:
        response = call(client, route, on_own_chat(client, world, route, values))
    if route.kind in (CHAT, CHAT_WRITE):
        assert_allowed(response)
    else:
        assert_refused(response)


@pytest.mark.parametrize("path", sorted(TEAM_ROUTES))
def test_team_routes(world: World, path: str) -> None:
    """An app key may only read its own identity and app card; members may not manage keys or read
    usage; another team's key sees none of our knowledge bases and apps."""
    method, values = TEAM_ROUTES[path]
    route = Route(method, path, lambda w: values, "team")
    with world.client(world.app_key) as client:
        as_app_key = call(client, route, values)
    if path in ("/api/health", "/api/v1/whoami", "/api/core/app/list", "/api/v1/models", "/v1/models"):
        assert_allowed(as_app_key)
    else:
        assert_refused(as_app_key)
    if path.startswith("/api/support/"):
        for key in (world.stranger_key, world.reader_key):
            with world.client(key) as client:
                assert_refused(call(client, route, values))


@pytest.mark.parametrize("path", sorted(SELF_ROUTES))
def test_account_routes(world: World, path: str) -> None:
    method, values, app_key_status, member_status = SELF_ROUTES[path]
    route = Route(method, path, lambda w: values, "self")
    with world.client(world.app_key) as client:
        assert call(client, route, values).status_code == app_key_status
    for key in (world.stranger_key, world.reader_key):
        with world.client(key) as client:
            assert call(client, route, values).status_code == member_status


@pytest.mark.parametrize("path", sorted(p for p in TEAM_ROUTES if p.startswith("/api/support/")))
def test_team_routes_in_a_members_session(world: World, reader_session: httpx.Client, path: str) -> None:
    """A member's session is refused the owners' and admins' routes, as the member's key is."""
    method, values = TEAM_ROUTES[path]
    assert_refused(call(reader_session, Route(method, path, lambda w: values, "team"), values))


def test_lists_show_only_what_the_caller_can_read(world: World) -> None:
    def listed(key: str, path: str) -> list[str]:
        with world.client(key) as client:
            response = client.post(path, json={})
        assert response.status_code == 200, response.text
        return [item["_id"] for item in response.json()["data"]]

    assert world.dataset_id not in listed(world.other_team_key, "/api/core/dataset/list")
    assert world.app_id not in listed(world.other_team_key, "/api/core/app/list")
    assert listed(world.stranger_key, "/api/core/dataset/list") == []
    assert world.app_id not in listed(world.stranger_key, "/api/core/app/list")
    assert sorted(listed(world.reader_key, "/api/core/dataset/list")) == sorted(
        [world.dataset_id, world.api_dataset_id]
    )
    assert world.app_id in listed(world.reader_key, "/api/core/app/list")  # with its copies
    assert listed(world.app_key, "/api/core/app/list") == [world.app_id]


def test_team_routes_answer_our_ids_as_made_up_ones(world: World) -> None:
    """The key and usage routes of another team's owner: our key id and our app id are unknown there."""
    with world.client(world.server.admin_key) as client:
        our_key = client.get("/api/v1/whoami").json()["data"]["keyId"]
    calls = [
        ("DELETE", "/api/support/openapi/delete", {"id": our_key}),
        ("GET", "/api/support/openapi/list", {"appId": world.app_id}),
        ("GET", "/api/support/usage/summary", {"appId": world.app_id}),
    ]
    with world.client(world.other_team_key) as client:
        for method, path, values in calls:
            route = Route(method, path, lambda w: {}, KEYS)  # call() takes the values itself
            ours, fake = call(client, route, values), call(client, route, made_up(values))
            assert blanked(ours) == blanked(fake), (path, ours.text, fake.text)
            assert world.app_id not in ours.text
