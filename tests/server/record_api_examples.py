"""Record one example of every route by running it: ``.venv/bin/python tests/server/record_api_examples.py``
(or ``make api-examples``).

A live server with the scripted model gets the permission matrix's world (a knowledge base with one
imported text, a simple app with one chat, tool sets, members); then every route of the matrix's table
is called once by the team's owner with the matrix's body, the routes that delete or sign out last. The
requests and answers go to ``src/fathom/server/openapi_examples.json``, which the OpenAPI document shows
as each operation's example, and to ``docs/api-examples.md``, written from the same file.
``tests/server/test_openapi_examples.py`` checks both against the document.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from security_world import World, build_world, serve  # noqa: E402
from test_permission_matrix import ROUTES, SELF_ROUTES, TEAM_ROUTES, Route  # noqa: E402

from fathom.server.api_examples import EXAMPLES_FILE, render_markdown  # noqa: E402
from fathom.testing import ScriptedOpenAIServer, Turn, text_turn  # noqa: E402

DOCS_PAGE = HERE.parent.parent / "docs" / "api-examples.md"
#: run after everything else, in this order: they remove what the other examples use
LAST = (
    "/api/core/chat/item/delete",
    "/api/core/chat/delHistory",
    "/api/core/chat/clearHistories",
    "/api/core/dataset/training/deleteTrainingData",
    "/api/core/dataset/data/delete",
    "/api/core/dataset/collection/delete",
    "/api/core/dataset/tag/delete",
    "/api/core/dataset/delete",
    "/api/support/outLink/delete",
    "/api/core/app/del",
)
WORKFLOW = {
    "name": "Greeter",
    "nodes": [
        {"nodeId": "start", "name": "Start", "flowNodeType": "workflowStart", "inputs": [], "outputs": []},
        {
            "nodeId": "answer",
            "name": "Answer",
            "flowNodeType": "answerNode",
            "inputs": [
                {"key": "text", "value": "Hello!", "valueType": "string", "renderTypeList": ["input"]}
            ],
            "outputs": [],
        },
    ],
    "edges": [{"source": "start", "target": "answer", "sourceHandle": "start-source-right"}],
}
FAKE_ID = "f" * 24


def _order(route: Route) -> tuple[int, str]:
    return (LAST.index(route.path) + 1 if route.path in LAST else 0, route.path)


def _data(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    return response.json()["data"]


def _failed_training_item(client: httpx.Client, scripted: ScriptedOpenAIServer) -> dict[str, str]:
    """A row the model failed on (its own knowledge base, so the other examples stay as they were):
    ``{datasetId, collectionId, dataId}``."""
    dataset_id = _data(client.post("/api/core/dataset/create", json={"name": "Training"}))
    body = {"datasetId": dataset_id, "name": "questions"}
    collection_id = _data(client.post("/api/core/dataset/collection/create", json=body))
    scripted.set_script(lambda request: Turn(status=400, error="the model refused this request"))
    try:
        push = {
            "collectionId": collection_id,
            "trainingType": "qa",
            "data": [{"q": "How long do refunds take?"}],
        }
        _data(client.post("/api/core/dataset/data/pushData", json=push))
        deadline = time.monotonic() + 30
        while not (
            errors := _data(
                client.post(
                    "/api/core/dataset/training/getTrainingError", json={"collectionId": collection_id}
                )
            )["list"]
        ):
            assert time.monotonic() < deadline, "the push was not trained"
            time.sleep(0.1)
    finally:
        scripted.set_script(lambda request: text_turn("ok"))
    return {"datasetId": dataset_id, "collectionId": collection_id, "dataId": errors[0]["_id"]}


def _overrides(
    world: World, client: httpx.Client, scripted: ScriptedOpenAIServer
) -> dict[str, dict[str, Any]]:
    """Bodies that make a route succeed where the matrix's own (made for refusals) would not."""
    failed = _failed_training_item(client, scripted)
    made = client.post("/api/support/openapi/create", json={"name": "to revoke"})
    key_id = made.json()["key"]["_id"]
    invite = "/api/support/user/team/invitation/create"
    doomed = _data(client.post(invite, json={"role": "member"}))["_id"]
    token = _data(client.post(invite, json={"role": "member"}))["token"]
    info = _data(client.post(invite, json={"role": "member"}))["token"]
    share = {"appId": world.app_id, "name": "Website", "type": "share"}
    share_id = _data(client.post("/api/support/outLink/create", json=share))
    return {
        "/api/core/chat/outLink/init": {"shareId": share_id, "outLinkUid": "visitor-1"},
        "/api/core/app/importWorkflow": WORKFLOW,
        "/api/core/dataset/training/getTrainingDataDetail": failed,
        "/api/core/dataset/training/deleteTrainingData": failed,
        "/api/core/app/template/detail": {"templateId": "simpleChat"},
        "/api/support/openapi/delete": {"id": key_id},
        "/api/support/user/team/invitation/delete": {"id": doomed},
        "/api/support/user/team/invitation/info": {"token": info},
        "/api/support/user/team/invitation/accept": {
            "token": token,
            "username": "newcomer",
            "password": "a long passphrase",
        },
        "/api/support/user/team/member/updateRole": {"tmbId": world.reader_id, "role": "admin"},
        "/api/support/user/team/member/delete": {"tmbId": world.stranger_id},
    }


def _all_routes(world: World) -> list[Route]:
    routes = list(ROUTES)
    for path, (method, body) in TEAM_ROUTES.items():
        routes.append(Route(method, path, lambda w, body=body: dict(body), "team"))
    root_password = world.server.boot.root_password or ""
    signed_in = {"username": "root", "password": root_password}
    for path, (method, body, _, _) in SELF_ROUTES.items():
        if path.endswith("loginByPassword"):
            body = signed_in
        routes.append(Route(method, path, lambda w, body=body: dict(body), "self"))
    return sorted(routes, key=_order)


def record(world: World, scripted: ScriptedOpenAIServer) -> dict[str, Any]:
    examples: dict[str, Any] = {}
    root_password = world.server.boot.root_password or ""
    with world.client(world.server.admin_key) as client:
        overrides = _overrides(world, client, scripted)
        for route in _all_routes(world):
            if route.path in examples:
                continue  # one example per path: the first form listed (collection/delete has two)
            values = overrides.get(route.path) or route.body(world)
            if route.multipart:
                files = {"file": ("notes.txt", b"Refunds are paid within five working days.", "text/plain")}
                response = client.post(route.path, files=files, data={"data": json.dumps(values)})
            elif route.method in ("GET", "DELETE"):
                response = client.request(route.method, route.path, params=values)
            else:
                response = client.request(route.method, route.path, json=values)
            try:
                answer: Any = response.json()
            except ValueError:  # an event stream
                answer = response.text
            shown = {k: ("<the root password>" if v == root_password else v) for k, v in values.items()}
            examples[route.path] = {
                "method": route.method,
                "multipart": route.multipart,
                "request": shown,
                "status": response.status_code,
                "response": answer,
            }
    return dict(sorted(examples.items()))


def main() -> None:
    with ScriptedOpenAIServer() as scripted, tempfile.TemporaryDirectory() as root:
        for server in serve(Path(root), scripted):
            examples = record(build_world(server, scripted), scripted)
    EXAMPLES_FILE.write_text(json.dumps(examples, indent=1, ensure_ascii=False) + "\n")
    DOCS_PAGE.write_text(render_markdown(examples))
    print(f"recorded {len(examples)} routes into {EXAMPLES_FILE} and {DOCS_PAGE}")


if __name__ == "__main__":
    main()
