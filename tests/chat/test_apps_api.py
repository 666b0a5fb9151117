"""Apps and versions over HTTP: create (simple / workflow), detail, update, publish, versions, copy,
export/import of FastGPT workflow JSON, delete, and the errors of each."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from chat_support import MODEL, ChatServer, simple_app_body

from fathom.testing import ScriptedOpenAIServer, text_turn

EXPORT = Path(__file__).parents[1] / "workflow" / "fixtures" / "exports" / "kb_chat_select.json"


def call(chat_server: ChatServer, path: str, body: dict[str, Any] | None = None, **query: Any) -> Any:
    with chat_server.client() as client:
        return client.post(path, json=body or {}, params=query).json()


def test_simple_app_detail_shows_config_and_compiled_graph(chat_server: ChatServer) -> None:
    app_id = call(chat_server, "/api/core/app/create", simple_app_body("Detail", welcomeText="Hello!"))[
        "data"
    ]
    detail = call(chat_server, "/api/core/app/detail", appId=app_id)["data"]
    assert detail["_id"] == app_id and detail["type"] == "simple" and detail["version"] == "v2"
    assert detail["simpleConfig"]["model"] == MODEL
    assert [n["flowNodeType"] for n in detail["nodes"]] == ["userGuide", "workflowStart", "chatNode"]
    assert detail["chatConfig"]["welcomeText"] == "Hello!"
    assert detail["hasPublished"] is True and detail["permission"]["isOwner"] is True  # create publishes


def test_simple_app_with_knowledge_base_searches_it_before_answering(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    with chat_server.client() as client:
        dataset = client.post("/api/core/dataset/create", json={"name": "Facts"}).json()["data"]
    config = {"datasets": [{"datasetId": dataset}], "datasetSearchSetting": {"searchMode": "fullTextRecall"}}
    app_id = chat_server.create_app(simple_app_body("KB app", **config))
    detail = call(chat_server, "/api/core/app/detail", appId=app_id)["data"]
    kinds = [n["flowNodeType"] for n in detail["nodes"]]
    assert kinds == ["userGuide", "workflowStart", "datasetSearchNode", "chatNode"]
    scripted.set_script([text_turn("From the KB.")])
    reply = call(
        chat_server,
        "/api/v1/chat/completions",
        {"appId": app_id, "detail": True, "messages": [{"role": "user", "content": "facts?"}]},
    )
    assert [r["moduleType"] for r in reply["responseData"]] == [
        "workflowStart",
        "datasetSearchNode",
        "chatNode",
    ]
    assert reply["responseData"][1]["searchMode"] == "fullTextRecall"


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({"name": "x", "type": "robot"}, "type: 'robot'"),
        ({"name": " ", "type": "simple"}, "name"),
        ({"name": "x", "type": "simple", "simpleConfig": {"modle": "y"}}, "unknown field(s) modle"),
        ({"name": "x", "type": "simple", "simpleConfig": {"tools": ["t"]}}, "config.tools[0]: must be"),
        ({"name": "x", "type": "advanced", "nodes": [{"nodeId": "a", "flowNodeType": "nope"}]}, "nope"),
    ],
)
def test_invalid_apps_are_refused_with_the_field_named(
    chat_server: ChatServer, body: dict[str, Any], fragment: str
) -> None:
    with chat_server.client() as client:
        response = client.post("/api/core/app/create", json=body)
    assert response.status_code == 400, response.text
    assert fragment in response.json()["message"]


def test_import_export_round_trip_keeps_fastgpt_json(chat_server: ChatServer) -> None:
    document = json.loads(EXPORT.read_text(encoding="utf-8"))
    app_id = call(chat_server, "/api/core/app/importWorkflow", {"name": "Imported", "workflow": document})[
        "data"
    ]
    exported = call(chat_server, "/api/core/app/exportWorkflow", appId=app_id)["data"]
    assert exported == {
        "nodes": document["nodes"],
        "edges": document["edges"],
        "chatConfig": document["chatConfig"],
    }


def test_publish_versions_list_detail_latest_and_copy(chat_server: ChatServer) -> None:
    app_id = call(chat_server, "/api/core/app/create", simple_app_body("Versions", systemPrompt="one"))[
        "data"
    ]
    first = call(chat_server, "/api/core/app/version/publish", {"appId": app_id, "versionName": "v1"})["data"]
    second = call(
        chat_server,
        "/api/core/app/version/publish",
        {"appId": app_id, "versionName": "v2", "simpleConfig": {"model": MODEL, "systemPrompt": "two"}},
    )["data"]
    listing = call(chat_server, "/api/core/app/version/list", {"appId": app_id, "pageSize": 10})["data"]
    assert listing["total"] == 3  # create published the first version, named after the app (FastGPT)
    assert [v["versionName"] for v in listing["list"]] == ["v2", "v1", "Versions"]
    old = call(chat_server, "/api/core/app/version/detail", appId=app_id, versionId=first["versionId"])[
        "data"
    ]
    prompts = [i["value"] for n in old["nodes"] for i in n["inputs"] if i["key"] == "systemPrompt"]
    assert prompts == ["one"]
    latest = call(chat_server, "/api/core/app/version/latest", appId=app_id)["data"]
    assert latest["_id"] == second["versionId"]
    copied = call(chat_server, "/api/core/app/copy", {"appId": app_id})["data"]["appId"]
    copy_detail = call(chat_server, "/api/core/app/detail", appId=copied)["data"]
    assert copy_detail["name"] == "Versions Copy" and copy_detail["hasPublished"] is True
    copy_latest = call(chat_server, "/api/core/app/version/latest", appId=copied)["data"]
    assert copy_latest["nodes"] == latest["nodes"]


def test_update_list_and_delete(chat_server: ChatServer) -> None:
    app_id = call(chat_server, "/api/core/app/create", simple_app_body("Renamed later"))["data"]
    assert (
        call(chat_server, "/api/core/app/update", {"appId": app_id, "name": "Zebra", "intro": "i"})["code"]
        == 200
    )
    names = [a["name"] for a in call(chat_server, "/api/core/app/list", {"searchKey": "zebra"})["data"]]
    assert names == ["Zebra"]
    with chat_server.client() as client:
        assert client.delete("/api/core/app/del", params={"appId": app_id}).json()["code"] == 200
        gone = client.get("/api/core/app/detail", params={"appId": app_id})
    assert gone.status_code == 404 and gone.json()["statusText"] == "appUnExist"
    assert call(chat_server, "/api/core/app/list", {"searchKey": "zebra"})["data"] == []
