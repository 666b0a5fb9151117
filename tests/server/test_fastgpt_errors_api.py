"""FastGPT's error bodies on every route of ``shared/spec/fastgpt-openapi.md``, through HTTP.

The body's ``code``, ``statusText`` and the start of its ``message`` are FastGPT's (its tables in
``packages/global/common/error/code/*.ts``, its generic strings verbatim); the HTTP status is Fathom's
meaningful one (FastGPT sends 500 or 200 for all of them). A streaming chat request that fails on its key
or its app gets FastGPT's ``event: error`` frame instead of a JSON body. On SQLite and PostgreSQL (the
issue-30 routes among them).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from live_support import LiveServer

FAKE = "f" * 24
KB, CHAT = "/api/core/dataset", "/api/core/chat"
APP_BODY = {"name": "Errors", "type": "simple", "aiSettings": {}}
NOT_A_KEY = "fathom-doesnotexist"


@dataclass
class World:
    app_id: str
    dataset_id: str
    collection_id: str
    app_key: str


@pytest.fixture(scope="module")
def module_live_server(module_live_server_each_backend: LiveServer) -> LiveServer:
    """This module's server, on SQLite and on PostgreSQL."""
    return module_live_server_each_backend


@pytest.fixture(scope="module")
def world(module_live_server: LiveServer) -> World:
    with module_live_server.client(module_live_server.admin_key) as client:
        app_id = client.post("/api/core/app/create", json=APP_BODY).json()["data"]
        dataset_id = client.post("/api/core/dataset/create", json={"name": "KB"}).json()["data"]
        collection_id = client.post(
            "/api/core/dataset/collection/create", json={"datasetId": dataset_id, "name": "rows"}
        ).json()["data"]
        app_key = client.post("/api/support/openapi/create", json={"name": "bot", "appId": app_id}).json()[
            "data"
        ]
    return World(app_id, dataset_id, collection_id, str(app_key))


Build = Callable[[World], dict[str, Any]]
Expect = tuple[int, int, str, str]  # HTTP status, body code, statusText, message starts with
Q = [{"role": "user", "content": "x"}]
NO_APP: Expect = (404, 502000, "appUnExist", "App not found")
NO_DATASET: Expect = (404, 501002, "unExistDataset", "Knowledge base not found")
NO_COLLECTION: Expect = (404, 501003, "unExistCollection", "Collection not found")
NO_DATA: Expect = (404, 500, "", "Data not found")  # FastGPT's generic error, its string
NO_CHAT: Expect = (404, 504000, "unAuthChat", "No permission to use this chat record")
APP_KEY_REQUIRED = "Key is error. You need to use the app key rather than the account key."


def generic(message: str, http: int = 400) -> Expect:
    """FastGPT's generic error: code 500, no statusText, its exact string."""
    return (http, 500, "", message)


def missing(field: str) -> Expect:
    return (400, 507004, "missingParams", field)


def invalid(message: str) -> Expect:
    return (400, 507000, "invalidParams", message)


CASES: list[tuple[str, str, Build, Expect]] = [
    # chat (spec §1)
    ("POST", "/api/v1/chat/completions", lambda w: {"appId": FAKE, "messages": Q}, NO_APP),
    ("POST", "/api/v2/chat/completions", lambda w: {"appId": FAKE, "messages": Q}, NO_APP),
    ("POST", "/api/v1/chat/completions", lambda w: {"appId": "nope", "messages": Q}, NO_APP),
    ("POST", "/api/v1/chat/completions", lambda w: {"messages": Q}, generic(APP_KEY_REQUIRED)),
    ("POST", "/api/v1/chat/completions",
     lambda w: {"appId": w.app_id, "messages": []},
     generic("messages is empty")),
    # history and records (spec §2)
    ("POST", f"{CHAT}/getHistories", lambda w: {"appId": FAKE}, NO_APP),
    ("POST", f"{CHAT}/updateHistory", lambda w: {"appId": FAKE, "chatId": "c"}, NO_APP),
    ("POST", f"{CHAT}/updateHistory", lambda w: {"appId": w.app_id}, missing("chatId")),
    ("POST", f"{CHAT}/updateHistory", lambda w: {"appId": w.app_id, "chatId": "none"}, NO_CHAT),
    ("POST", f"{CHAT}/updateHistory",
     lambda w: {"appId": w.app_id, "chatId": "c", "customTitle": "t" * 501},
     invalid("customTitle: at most 500")),
    ("DELETE", f"{CHAT}/delHistory", lambda w: {"appId": FAKE, "chatId": "c"}, NO_APP),
    ("DELETE", f"{CHAT}/clearHistories", lambda w: {"appId": FAKE}, NO_APP),
    ("GET", f"{CHAT}/init", lambda w: {"appId": FAKE, "chatId": "c"}, NO_APP),
    ("POST", f"{CHAT}/getPaginationRecords", lambda w: {"appId": FAKE, "chatId": "c"}, NO_APP),
    ("GET", f"{CHAT}/getResData", lambda w: {"appId": FAKE, "chatId": "c", "dataId": "d"}, NO_APP),
    ("DELETE", f"{CHAT}/item/delete", lambda w: {"appId": FAKE, "chatId": "c", "contentId": "d"}, NO_APP),
    ("POST", f"{CHAT}/feedback/updateUserFeedback",
     lambda w: {"appId": w.app_id, "chatId": "c"},
     generic("dataId is required")),
    # knowledge bases (spec §3)
    ("POST", f"{KB}/create", lambda w: {}, missing("name")),
    ("POST", f"{KB}/create", lambda w: {"name": "x" * 201}, invalid("name: at most 200 characters")),
    ("GET", f"{KB}/detail", lambda w: {}, missing("id")),
    ("GET", f"{KB}/detail", lambda w: {"id": FAKE}, NO_DATASET),
    ("GET", f"{KB}/detail", lambda w: {"id": "nope"}, NO_DATASET),
    ("DELETE", f"{KB}/delete", lambda w: {"id": FAKE}, NO_DATASET),
    # collections (spec §4)
    ("POST", f"{KB}/collection/create", lambda w: {"datasetId": FAKE, "name": "x"}, NO_DATASET),
    ("POST", f"{KB}/collection/create",
     lambda w: {"datasetId": w.dataset_id, "name": "x", "type": "link"},
     invalid("type")),
    ("POST", f"{KB}/collection/create/text",
     lambda w: {"datasetId": FAKE, "name": "x", "text": "y"},
     NO_DATASET),
    ("POST", f"{KB}/collection/create/link",
     lambda w: {"datasetId": FAKE, "link": "https://a.b"},
     NO_DATASET),
    ("POST", f"{KB}/collection/listV2", lambda w: {"datasetId": FAKE}, NO_DATASET),
    ("GET", f"{KB}/collection/trainingDetail", lambda w: {"collectionId": FAKE}, NO_COLLECTION),
    ("PUT", f"{KB}/training/updateTrainingData", lambda w: {"collectionId": FAKE}, NO_COLLECTION),
    ("GET", f"{KB}/collection/detail", lambda w: {"id": FAKE}, NO_COLLECTION),
    ("DELETE", f"{KB}/collection/delete", lambda w: {"id": FAKE}, NO_COLLECTION),
    # issue 30: the collection, training and tag routes FastGPT's scripts call
    ("POST", f"{KB}/collection/delete", lambda w: {"collectionIds": [FAKE]}, NO_COLLECTION),
    ("PUT", f"{KB}/collection/update", lambda w: {"id": FAKE, "name": "x"}, NO_COLLECTION),
    ("PUT", f"{KB}/collection/update", lambda w: {"name": "x"}, missing("id: is required")),
    ("POST", f"{KB}/collection/delete", lambda w: {}, missing("collectionIds: is required")),
    ("GET", f"{KB}/training/getDatasetTrainingQueue", lambda w: {"datasetId": FAKE}, NO_DATASET),
    ("POST", f"{KB}/training/getTrainingError", lambda w: {"collectionId": FAKE}, NO_COLLECTION),
    ("POST", f"{KB}/training/getTrainingDataDetail",
     lambda w: {"datasetId": FAKE, "collectionId": FAKE, "dataId": FAKE},
     NO_COLLECTION),
    ("POST", f"{KB}/training/deleteTrainingData",
     lambda w: {"datasetId": FAKE, "collectionId": FAKE, "dataId": FAKE},
     NO_COLLECTION),
    ("POST", f"{KB}/training/deleteTrainingData",
     lambda w: {"datasetId": w.dataset_id, "collectionId": w.collection_id},
     missing("dataId")),
    ("POST", f"{KB}/tag/create", lambda w: {"datasetId": FAKE, "tag": "x"}, NO_DATASET),
    ("POST", f"{KB}/tag/list", lambda w: {"datasetId": FAKE}, NO_DATASET),
    ("POST", f"{KB}/collection/create/apiCollection",
     lambda w: {"datasetId": FAKE, "apiFileId": "x", "name": "x"},
     NO_DATASET),
    ("POST", "/api/core/ai/agent/v2/createQuestionGuide", lambda w: {"appId": FAKE, "chatId": "c"}, NO_APP),
    ("POST", "/api/support/wallet/usage/createTrainingUsage", lambda w: {"datasetId": FAKE}, NO_DATASET),
    # data rows and search (spec §5)
    ("POST", f"{KB}/data/pushData", lambda w: {}, generic("collectionId or data is empty")),
    ("POST", f"{KB}/data/pushData",
     lambda w: {"collectionId": w.collection_id, "data": [{"q": "x"}] * 201},
     generic("Data is too long, max 200")),
    ("POST", f"{KB}/data/pushData", lambda w: {"collectionId": FAKE, "data": [{"q": "x"}]}, NO_COLLECTION),
    ("POST", f"{KB}/data/insertData", lambda w: {"collectionId": w.collection_id}, generic("q is required")),
    ("POST", f"{KB}/data/insertData", lambda w: {"collectionId": FAKE, "q": "x"}, NO_COLLECTION),
    ("POST", f"{KB}/data/v2/list", lambda w: {"collectionId": FAKE}, NO_COLLECTION),
    ("GET", f"{KB}/data/detail", lambda w: {"id": FAKE}, NO_DATA),
    ("PUT", f"{KB}/data/update", lambda w: {"dataId": FAKE, "q": "x"}, NO_DATA),
    ("DELETE", f"{KB}/data/delete", lambda w: {"id": FAKE}, NO_DATA),
    ("POST", f"{KB}/searchTest", lambda w: {"datasetId": FAKE, "text": "x"}, NO_DATASET),
    ("POST", f"{KB}/searchTest", lambda w: {"datasetId": w.dataset_id}, missing("text")),
    # API keys
    ("DELETE", "/api/support/openapi/delete",
     lambda w: {"id": FAKE},
     (404, 506000, "openapiUnExist", "API key not found")),
]  # fmt: skip
IDS = [f"{method} {path} {i}" for i, (method, path, *_) in enumerate(CASES)]
# every route of the spec that Fathom serves, for the key checks
SPEC_ROUTES = sorted({(method, path) for method, path, *_ in CASES if not path.startswith("/api/support")})


def call(client: httpx.Client, method: str, path: str, values: dict[str, Any]) -> httpx.Response:
    if method in ("GET", "DELETE"):
        return client.request(method, path, params=values)
    return client.request(method, path, json=values)


def assert_error(body: dict[str, Any], code: int, status_text: str, message: str) -> None:
    assert body["code"] == code and body["statusText"] == status_text, body
    assert body["message"].startswith(message) and body["data"] is None, body


@pytest.mark.parametrize(("method", "path", "build", "expect"), CASES, ids=IDS)
def test_route_errors_carry_fastgpts_code_status_text_and_message(
    module_live_server: LiveServer, world: World, method: str, path: str, build: Build, expect: Expect
) -> None:
    http, code, status_text, message = expect
    with module_live_server.client(module_live_server.admin_key) as client:
        response = call(client, method, path, build(world))
    assert response.status_code == http, response.text
    assert_error(response.json(), code, status_text, message)


@pytest.mark.parametrize(("method", "path"), SPEC_ROUTES, ids=[f"{m} {p}" for m, p in SPEC_ROUTES])
@pytest.mark.parametrize(
    ("key", "code", "status_text", "message"),
    [
        (None, 403, "unAuthorization", "Invalid credentials"),
        ("Token abc", 403, "unAuthorization", "Invalid credentials"),
        (NOT_A_KEY, 514, "unAuthApiKey", "Invalid API key"),
    ],
    ids=["no key", "no Bearer", "unknown key"],
)
def test_every_route_refuses_a_bad_key_with_fastgpts_error(
    module_live_server: LiveServer,
    method: str,
    path: str,
    key: str | None,
    code: int,
    status_text: str,
    message: str,
) -> None:
    headers = {} if key is None else {"Authorization": key if " " in key else f"Bearer {key}"}
    with httpx.Client(base_url=module_live_server.base_url, headers=headers, timeout=10) as client:
        response = call(client, method, path, {})
    assert response.status_code == 401, response.text
    assert_error(response.json(), code, status_text, message)


def test_an_app_key_on_a_knowledge_base_is_fastgpts_unauth_dataset(
    module_live_server: LiveServer, world: World
) -> None:
    with module_live_server.client(world.app_key) as client:
        response = client.post("/api/core/dataset/collection/listV2", json={"datasetId": world.dataset_id})
        other_app = client.post("/api/core/chat/getHistories", json={"appId": FAKE})
    assert response.status_code == 403
    assert_error(response.json(), 501004, "unAuthDataset", "No access to this knowledge base")
    assert other_app.status_code == 403
    assert_error(other_app.json(), 502001, "unAuthApp", "No access to this app")


def sse_error(response: httpx.Response) -> Any:
    """The one ``event: error`` frame of a refused streaming chat."""
    assert response.headers["content-type"].startswith("text/event-stream"), response.text
    frames = [block for block in response.text.split("\n\n") if block.strip()]
    assert len(frames) == 1, response.text
    lines = frames[0].splitlines()
    assert lines[0] == "event: error" and lines[1].startswith("data: "), response.text
    return json.loads(lines[1][len("data: ") :])


@pytest.mark.parametrize("path", ["/api/v1/chat/completions", "/api/v2/chat/completions"])
def test_a_streaming_chat_refused_on_its_key_or_app_gets_fastgpts_error_frame(
    module_live_server: LiveServer, world: World, path: str
) -> None:
    question = {"stream": True, "messages": [{"role": "user", "content": "x"}]}
    with httpx.Client(base_url=module_live_server.base_url, timeout=10) as anonymous:
        no_key = anonymous.post(path, json={**question, "appId": world.app_id})
    with module_live_server.client(NOT_A_KEY) as stranger:
        bad_key = stranger.post(path, json={**question, "appId": world.app_id})
    with module_live_server.client(module_live_server.admin_key) as client:
        no_app = client.post(path, json={**question, "appId": FAKE})
        account_key = client.post(path, json=question)
        empty = client.post(path, json={**question, "appId": world.app_id, "messages": []})
    with module_live_server.client(world.app_key) as bound:
        other_app = bound.post(path, json={**question, "appId": FAKE})
    # FastGPT's named errors come as their envelope, its generic ones as {"message"}
    assert no_key.status_code == 401
    assert_error(sse_error(no_key), 403, "unAuthorization", "Invalid credentials")
    assert bad_key.status_code == 401
    assert_error(sse_error(bad_key), 514, "unAuthApiKey", "Invalid API key")
    assert no_app.status_code == 404
    assert_error(sse_error(no_app), 502000, "appUnExist", "App not found")
    assert other_app.status_code == 403
    assert_error(sse_error(other_app), 502001, "unAuthApp", "No access to this app")
    assert account_key.status_code == 400
    assert sse_error(account_key) == {"message": APP_KEY_REQUIRED}
    assert empty.status_code == 400 and sse_error(empty) == {"message": "messages is empty"}


def test_an_unknown_route_and_a_missing_upload_answer_the_envelope(module_live_server: LiveServer) -> None:
    with module_live_server.client(module_live_server.admin_key) as client:
        unknown = client.get("/api/core/nothing/here")
        no_file = client.post(
            "/api/core/dataset/collection/create/localFile", data={"data": json.dumps({"datasetId": FAKE})}
        )
        empty = client.post(
            "/api/core/dataset/collection/create/localFile",
            data={"data": json.dumps({"datasetId": FAKE})},
            files={"file": ("a.txt", b"", "text/plain")},
        )
    assert unknown.status_code == 404 and unknown.json()["statusText"] == "notFound"
    # never FastAPI's 422 shape: the envelope, 400, naming the field
    assert no_file.status_code == 400
    assert_error(no_file.json(), 507000, "invalidParams", "file: Field required")
    assert empty.status_code == 400 and empty.json()["message"] == "file is empty"
