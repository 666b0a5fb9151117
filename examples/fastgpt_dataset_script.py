#!/usr/bin/env python3
"""A knowledge-base script written against FastGPT's dataset API documentation
(``document/content/docs/openapi/dataset.mdx``), with nothing but the standard library: it runs the same
against FastGPT and against Fathom.

    export FASTGPT_BASE_URL=http://127.0.0.1:3000 FASTGPT_API_KEY=fastgpt-xxx
    export FASTGPT_AGENT_MODEL=gpt-4o-mini   # optional: the model that writes the Q&A pairs
    python examples/fastgpt_dataset_script.py

Steps: create a folder → a knowledge base in it → two text collections in QA mode (the knowledge base's
``agentModel`` writes question/answer pairs from each chunk), with tags → wait for training → searchTest
filtered by a tag (``collectionFilterMatch``), printing the pairs it found → rename and retag a collection →
delete a collection, then the folder (which deletes the knowledge base in it).
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

BASE_URL = os.environ.get("FASTGPT_BASE_URL", "http://127.0.0.1:3000").rstrip("/")
API_KEY = os.environ.get("FASTGPT_API_KEY", "")
AGENT_MODEL = os.environ.get("FASTGPT_AGENT_MODEL", "")  # empty: the server's default model
TRAINING_TIMEOUT_S = float(os.environ.get("FASTGPT_TRAINING_TIMEOUT", "300"))

REFUNDS = (
    "Refunds are paid back to the original card within five working days. "
    "A refund needs the order number and the reason for the return."
)
SHIPPING = "Parcels ship from Rotterdam every weekday and arrive within three days anywhere in the EU."


class ApiFailure(RuntimeError):
    pass


def call(
    method: str, path: str, body: dict[str, Any] | None = None, query: dict[str, str] | None = None
) -> Any:
    """One request; the ``data`` of FastGPT's envelope ``{code, statusText, message, data}``."""
    url = f"{BASE_URL}/api{path}"
    if query:
        url += "?" + urllib.parse.urlencode(query)
    payload = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=payload, method=method)
    request.add_header("Authorization", f"Bearer {API_KEY}")
    request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            answer = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        raise ApiFailure(f"{method} {path}: HTTP {exc.code} {exc.read().decode(errors='replace')}") from None
    if answer.get("code") != 200:
        raise ApiFailure(f"{method} {path}: {answer}")
    return answer.get("data")


def step(text: str) -> None:
    print(f"- {text}", flush=True)


def wait_for_training(dataset_id: str, collection_ids: list[str]) -> None:
    """Poll ``collection/listV2`` until every collection's ``trainingAmount`` is 0."""
    deadline = time.monotonic() + TRAINING_TIMEOUT_S
    while True:
        page = call(
            "POST", "/core/dataset/collection/listV2", {"datasetId": dataset_id, "offset": 0, "pageSize": 30}
        )
        items = {item["_id"]: item for item in page["list"]}
        waiting = [cid for cid in collection_ids if items[cid]["trainingAmount"] > 0]
        failed = [cid for cid in collection_ids if items[cid].get("hasError")]
        if failed:
            raise ApiFailure(f"training failed for {failed}")
        if not waiting:
            return
        if time.monotonic() > deadline:
            raise ApiFailure(f"training not finished after {TRAINING_TIMEOUT_S}s: {waiting}")
        time.sleep(1)


def main() -> int:
    if not API_KEY:
        print("set FASTGPT_API_KEY (and FASTGPT_BASE_URL)", file=sys.stderr)
        return 2

    step("create a folder")
    folder_id = call(
        "POST",
        "/core/dataset/create",
        {
            "parentId": None,
            "type": "folder",
            "name": "Script folder",
            "intro": "made by a script",
            "avatar": "",
        },
    )

    step("create a knowledge base in the folder")
    dataset: dict[str, Any] = {
        "parentId": folder_id,
        "type": "dataset",
        "name": "Script knowledge base",
        "intro": "",
        "avatar": "",
    }
    if AGENT_MODEL:
        dataset["agentModel"] = AGENT_MODEL
    dataset_id = call("POST", "/core/dataset/create", dataset)
    inside = call("POST", "/core/dataset/list", {"parentId": folder_id})
    assert [item["_id"] for item in inside] == [dataset_id], inside

    step("import two texts in QA mode, with tags")
    collection_ids = []
    for name, text, tags in (
        ("refunds", REFUNDS, ["policy", "money"]),
        ("shipping", SHIPPING, ["logistics"]),
    ):
        created = call(
            "POST",
            "/core/dataset/collection/create/text",
            {
                "text": text,
                "datasetId": dataset_id,
                "parentId": None,
                "name": name,
                # the knowledge base's agentModel writes question/answer pairs from each chunk
                # ("qaPrompt" would replace its default instructions)
                "trainingType": "qa",
                "chunkSettingMode": "auto",
                "tags": tags,
                "metadata": {},
            },
        )
        collection_ids.append(created["collectionId"])
    refunds_id, shipping_id = collection_ids

    step("wait for training")
    wait_for_training(dataset_id, collection_ids)

    step("search, only in collections tagged 'money'")
    result = call(
        "POST",
        "/core/dataset/searchTest",
        {
            "datasetId": dataset_id,
            "text": "How long do refunds and parcels take?",
            "limit": 5000,
            "similarity": 0,
            "searchMode": "embedding",
            "usingReRank": False,
            "collectionFilterMatch": json.dumps({"tags": {"$and": ["money"]}}),
        },
    )
    found = {item["collectionId"] for item in result["list"]}
    if found != {refunds_id}:
        raise ApiFailure(f"the tag filter let through {found}, expected only {refunds_id}")
    if not all(item["a"] for item in result["list"]):
        raise ApiFailure("a QA collection holds a row without an answer")
    for item in result["list"]:
        print(f"  found: {json.dumps({'q': item['q'], 'a': item['a']})}", flush=True)

    step("rename the refunds collection and change its tags")
    call(
        "PUT",
        "/core/dataset/collection/update",
        {"id": refunds_id, "name": "refunds 2024", "tags": ["policy"]},
    )
    detail = call("GET", "/core/dataset/collection/detail", query={"id": refunds_id})
    if detail["name"] != "refunds 2024" or detail["tags"] != ["policy"]:
        raise ApiFailure(f"update not kept: {detail['name']!r} {detail['tags']!r}")

    step("delete the shipping collection, then the folder with its knowledge base")
    call("DELETE", "/core/dataset/collection/delete", query={"id": shipping_id})
    call("DELETE", "/core/dataset/delete", query={"id": folder_id})
    remaining = call("POST", "/core/dataset/list", {"parentId": ""})
    if any(item["_id"] in (folder_id, dataset_id) for item in remaining):
        raise ApiFailure("the folder or its knowledge base is still listed")

    print("done", flush=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ApiFailure as failure:
        print(f"failed: {failure}", file=sys.stderr)
        sys.exit(1)
