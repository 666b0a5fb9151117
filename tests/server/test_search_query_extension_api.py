"""``POST /api/core/dataset/searchTest`` with ``datasetSearchUsingExtensionQuery``: the chat model rewrites
the question (a real ``/v1/chat/completions`` call to a scripted model), up to 3 rewrites are kept by lazy
greedy and searched with the question; the answer names ``queryExtensionModel``. A failing model leaves the
plain question; an unknown model is a 400 naming the field."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from live_support import LiveServer, free_port, start_live_server

from fathom.config import Settings
from fathom.testing import ScriptedOpenAIServer, Turn

DOC = "\n\n".join(
    f"## {title}\n\n{body}"
    for title, body in [
        ("Refunds", "Refunds are paid back to the original card within five working days."),
        ("Shipping", "Parcels ship from Rotterdam and arrive within three days in the EU."),
        ("Warranty", "Every device carries a two year warranty against manufacturing faults."),
    ]
)
QUESTION = "how long until I get my money back?"
REWRITES = [
    "When are refunds paid back to the card?",
    "How many working days does a refund take?",
    "refund time",
    "Refund time!",  # the same as the one before on letters and digits
    "Where do parcels ship from?",
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, ScriptedOpenAIServer]]:
    with ScriptedOpenAIServer() as scripted:
        root = tmp_path_factory.mktemp("extension")
        settings = Settings(
            data_dir=root / "data",
            port=free_port(),
            workers=1,
            openai_base_url=scripted.base_url,
            chat_model="scripted-chat",
        )
        for server in start_live_server(settings):
            yield server, scripted


def _ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    return response.json()["data"]


def _dataset(client: httpx.Client) -> str:
    dataset_id = str(_ok(client.post("/api/core/dataset/create", json={"name": "Extension"})))
    collection_id = _ok(
        client.post(
            "/api/core/dataset/collection/create/text",
            json={"datasetId": dataset_id, "name": "faq", "text": DOC},
        )
    )["collectionId"]
    deadline = time.monotonic() + 60
    while True:
        listing = _ok(client.post("/api/core/dataset/collection/listV2", json={"datasetId": dataset_id}))
        item = next(i for i in listing["list"] if i["_id"] == collection_id)
        if item["trainingAmount"] == 0 or item["hasError"]:
            return dataset_id
        assert time.monotonic() < deadline, item
        time.sleep(0.2)


def test_extended_queries_are_searched_and_reported(served: tuple[LiveServer, ScriptedOpenAIServer]) -> None:
    server, scripted = served
    scripted.set_script([json.dumps(REWRITES)])
    with server.client(server.admin_key) as client:
        dataset_id = _dataset(client)
        body = {
            "datasetId": dataset_id,
            "text": QUESTION,
            "searchMode": "mixedRecall",
            "datasetSearchUsingExtensionQuery": True,
            "datasetSearchExtensionBg": "A shop's customer service FAQ.",
        }
        result = _ok(client.post("/api/core/dataset/searchTest", json=body))
    assert result["queryExtensionModel"] == "scripted-chat"
    queries = result["queries"]
    assert queries[0] == QUESTION and 2 <= len(queries) <= 4  # the question and up to 3 rewrites
    assert set(queries[1:]) <= set(REWRITES)
    assert "Refunds" in result["list"][0]["q"]
    request = scripted.chat_requests[-1]
    system = request["messages"][0]["content"]
    assert "rewrite" in system and "customer service FAQ" in system
    assert request["messages"][-1] == {"role": "user", "content": QUESTION}


def test_a_failing_model_leaves_the_plain_question(served: tuple[LiveServer, ScriptedOpenAIServer]) -> None:
    server, scripted = served
    scripted.set_script([Turn(status=400, error="the model refuses")])
    with server.client(server.admin_key) as client:
        dataset_id = _dataset(client)
        body = {"datasetId": dataset_id, "text": QUESTION, "datasetSearchUsingExtensionQuery": True}
        result = _ok(client.post("/api/core/dataset/searchTest", json=body))
    assert "queryExtensionModel" not in result and result["list"]


def test_unknown_extension_model_is_a_clear_400(served: tuple[LiveServer, ScriptedOpenAIServer]) -> None:
    server, _ = served
    with server.client(server.admin_key) as client:
        dataset_id = _dataset(client)
        body = {
            "datasetId": dataset_id,
            "text": QUESTION,
            "datasetSearchUsingExtensionQuery": True,
            "datasetSearchExtensionModel": "no-such-model",
        }
        response = client.post("/api/core/dataset/searchTest", json=body)
    assert response.status_code == 400 and "datasetSearchExtensionModel" in response.text
