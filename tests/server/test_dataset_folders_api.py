"""Folders of knowledge bases and of collections through FastGPT's HTTP API (``dataset.mdx`` bodies, ids
substituted), on SQLite and PostgreSQL: ``type: "folder"`` on create, ``parentId`` kept and listed by,
moves, the breadcrumb (``core/dataset/paths``), deleting a folder with its contents, and a member's
permission on a folder holding for what is in it."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from itertools import count
from typing import Any

import httpx
import pytest
from live_support import FAQ, LiveServer, backend_settings, ok, start_live_server
from security_world import run_on

from fathom.platform import Platform

OBJECT_ID = re.compile(r"^[0-9a-f]{24}$")
KB = "/api/core/dataset"
_names = count()


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from start_live_server(backend_settings(request, tmp_path_factory, "folders", workers=1))


@pytest.fixture
def client(server: LiveServer) -> Iterator[httpx.Client]:
    with server.client(server.admin_key) as client:
        yield client


def refused(response: httpx.Response, status: int, status_text: str) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["statusText"] == status_text and body["data"] is None, body
    return str(body["message"])


def create(client: httpx.Client, name: str, *, type: str = "dataset", parent: str | None = None) -> str:
    body = {"parentId": parent, "type": type, "name": name, "intro": "", "avatar": ""}
    created = str(ok(client.post(f"{KB}/create", json=body)))
    assert OBJECT_ID.match(created)
    return created


def names(client: httpx.Client, body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {item["name"]: item for item in ok(client.post(f"{KB}/list", json=body))}


def test_a_folder_holds_knowledge_bases_listed_by_parent_id(client: httpx.Client) -> None:
    folder = create(client, f"Manuals {next(_names)}", type="folder")
    inner = create(client, f"Printer {next(_names)}", parent=folder)
    root = names(client, {"parentId": ""})
    folder_name = ok(client.get(f"{KB}/detail", params={"id": folder}))["name"]
    assert root[folder_name]["type"] == "folder" and root[folder_name]["parentId"] is None
    assert all(item["_id"] != inner for item in root.values())
    inside = ok(client.post(f"{KB}/list", params={"parentId": folder}, json={"parentId": folder}))
    assert [(item["_id"], item["type"], item["parentId"]) for item in inside] == [(inner, "dataset", folder)]
    assert ok(client.get(f"{KB}/detail", params={"id": inner}))["parentId"] == folder
    only_folders = ok(client.post(f"{KB}/list", json={"parentId": "", "type": "folder"}))
    assert {item["type"] for item in only_folders} == {"folder"}
    # searchKey looks in every folder
    found = ok(client.post(f"{KB}/list", json={"parentId": "", "searchKey": "printer"}))
    assert inner in [item["_id"] for item in found]


def test_paths_lead_from_the_root_to_a_folder(client: httpx.Client) -> None:
    top = create(client, "Top", type="folder")
    sub = create(client, "Sub", type="folder", parent=top)
    assert ok(client.get(f"{KB}/paths", params={"parentId": sub})) == [
        {"parentId": top, "parentName": "Top"},
        {"parentId": sub, "parentName": "Sub"},
    ]
    assert ok(client.get(f"{KB}/paths", params={"parentId": ""})) == []


def test_update_moves_a_knowledge_base_and_refuses_cycles(client: httpx.Client) -> None:
    a = create(client, "A", type="folder")
    b = create(client, "B", type="folder", parent=a)
    kb = create(client, "KB moved")
    ok(client.put(f"{KB}/update", json={"id": kb, "parentId": b}))
    assert ok(client.get(f"{KB}/detail", params={"id": kb}))["parentId"] == b
    ok(client.put(f"{KB}/update", json={"id": kb, "parentId": ""}))
    assert ok(client.get(f"{KB}/detail", params={"id": kb}))["parentId"] is None
    message = refused(client.put(f"{KB}/update", json={"id": a, "parentId": b}), 400, "invalidParams")
    assert message.startswith("parentId:") and "itself or its subfolders" in message
    message = refused(client.post(f"{KB}/create", json={"name": "x", "parentId": kb}), 400, "invalidParams")
    assert message.startswith("parentId:") and "not a folder" in message


def test_a_folder_has_no_collections_and_no_search(client: httpx.Client) -> None:
    folder = create(client, "Empty", type="folder")
    body = {"datasetId": folder, "name": "x", "text": "some text", "trainingType": "chunk"}
    message = refused(client.post(f"{KB}/collection/create/text", json=body), 400, "invalidParams")
    assert message.startswith("datasetId:") and "folder" in message


def wait_trained(client: httpx.Client, dataset_id: str, parent: str | None = None) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 60
    while True:
        page = ok(client.post(f"{KB}/collection/listV2", json={"datasetId": dataset_id, "parentId": parent}))
        if all(item["trainingAmount"] == 0 for item in page["list"]):
            return list(page["list"])
        assert time.monotonic() < deadline and not any(item["hasError"] for item in page["list"]), page
        time.sleep(0.1)


def test_deleting_a_folder_deletes_what_is_in_it(client: httpx.Client) -> None:
    folder = create(client, "Doomed", type="folder")
    sub = create(client, "Doomed sub", type="folder", parent=folder)
    kb = create(client, "Doomed KB", parent=sub)
    ok(client.post(f"{KB}/collection/create/text", json={"datasetId": kb, "name": "faq", "text": FAQ}))
    wait_trained(client, kb)
    ok(client.delete(f"{KB}/delete", params={"id": folder}))
    for gone in (folder, sub, kb):
        refused(client.get(f"{KB}/detail", params={"id": gone}), 404, "unExistDataset")


def test_collection_folders_hold_collections(client: httpx.Client) -> None:
    kb = create(client, "With folders")
    folder = str(
        ok(
            client.post(
                f"{KB}/collection/create",
                json={
                    "datasetId": kb,
                    "parentId": None,
                    "name": "Policies",
                    "type": "folder",
                    "metadata": {},
                },
            )
        )
    )
    body = {"datasetId": kb, "parentId": folder, "name": "refunds", "text": FAQ, "trainingType": "chunk"}
    inner = ok(client.post(f"{KB}/collection/create/text", json=body))["collectionId"]
    inside = wait_trained(client, kb, folder)
    assert [(item["_id"], item["parentId"]) for item in inside] == [(inner, folder)]
    root = ok(client.post(f"{KB}/collection/listV2", json={"datasetId": kb, "offset": 0, "pageSize": 10}))
    assert [(item["_id"], item["type"]) for item in root["list"]] == [(folder, "folder")]
    folders = ok(client.post(f"{KB}/collection/listV2", json={"datasetId": kb, "selectFolder": True}))
    assert [item["_id"] for item in folders["list"]] == [folder]
    searched = ok(client.post(f"{KB}/collection/listV2", json={"datasetId": kb, "searchText": "REFUND"}))
    assert [item["_id"] for item in searched["list"]] == [inner]
    # a text collection is no folder
    message = refused(
        client.post(f"{KB}/collection/create", json={"datasetId": kb, "parentId": inner, "name": "y"}),
        400,
        "invalidParams",
    )
    assert message.startswith("parentId:")
    # the search reads collections inside folders
    hits = ok(client.post(f"{KB}/searchTest", json={"datasetId": kb, "text": "refund card"}))["list"]
    assert hits and hits[0]["collectionId"] == inner
    # deleting the folder deletes the collection in it, rows and all
    ok(client.post(f"{KB}/collection/delete", json={"collectionIds": [folder]}))
    refused(client.get(f"{KB}/collection/detail", params={"id": inner}), 404, "unExistCollection")
    assert ok(client.post(f"{KB}/searchTest", json={"datasetId": kb, "text": "refund card"}))["list"] == []


def test_forbidding_a_folder_forbids_what_is_in_it(client: httpx.Client) -> None:
    kb = create(client, "Forbid")
    body = {"datasetId": kb, "name": "F", "type": "folder"}
    folder = str(ok(client.post(f"{KB}/collection/create", json=body)))
    text = {"datasetId": kb, "parentId": folder, "name": "faq", "text": FAQ}
    inner = ok(client.post(f"{KB}/collection/create/text", json=text))["collectionId"]
    wait_trained(client, kb, folder)
    ok(client.put(f"{KB}/collection/update", json={"id": folder, "forbid": True}))
    assert ok(client.get(f"{KB}/collection/detail", params={"id": inner}))["forbid"] is True
    assert ok(client.post(f"{KB}/searchTest", json={"datasetId": kb, "text": "refund card"}))["list"] == []


def member_key(server: LiveServer, client: httpx.Client) -> tuple[str, str]:
    link = ok(client.post("/api/support/user/team/invitation/create", json={"role": "member"}))["token"]
    with server.client() as anonymous:
        body = {"token": link, "username": f"folder-reader{next(_names)}", "password": "correct horse"}
        joined = ok(anonymous.post("/api/support/user/team/invitation/accept", json=body))
    member_id = str(joined["user"]["tmbId"])

    async def make_key(platform: Platform) -> str:
        return (await platform.api_keys.create_key(joined["user"]["teamId"], member_id))[1]

    return member_id, run_on(server, make_key)


def test_permission_on_a_folder_holds_for_what_is_in_it(server: LiveServer, client: httpx.Client) -> None:
    folder = create(client, "Shared", type="folder")
    inside = create(client, "Shared KB", parent=folder)
    outside = create(client, "Private KB")
    member_id, key = member_key(server, client)
    with server.client(key) as member:
        refused(member.get(f"{KB}/detail", params={"id": inside}), 403, "unAuthDataset")
        grant = {"datasetId": folder, "tmbIds": [member_id], "permission": "read"}
        ok(client.post(f"{KB}/collaborator/update", json=grant))
        assert ok(member.get(f"{KB}/detail", params={"id": inside}))["_id"] == inside
        assert [item["_id"] for item in ok(member.post(f"{KB}/list", json={"parentId": folder}))] == [inside]
        refused(member.get(f"{KB}/detail", params={"id": outside}), 403, "unAuthDataset")
        # read is not write: the member may not import into it
        body = {"datasetId": inside, "name": "x", "text": "y"}
        refused(member.post(f"{KB}/collection/create/text", json=body), 403, "unAuthDataset")
        grant["permission"] = "write"
        ok(client.post(f"{KB}/collaborator/update", json=grant))
        ok(member.post(f"{KB}/collection/create/text", json=body))
