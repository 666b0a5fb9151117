"""``POST /api/core/dataset/searchTest`` with ``datasetSearchUsingExtensionQuery``: the chat model rewrites
the question (a real ``/v1/chat/completions`` call to a scripted model), up to 3 rewrites are kept by lazy
greedy and searched with the question; the answer names ``queryExtensionModel``. A failing model leaves the
plain question; an unknown model runs on the default chat model (FastGPT getLLMModel)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from live_support import LiveServer, create_text_dataset, free_port, ok, start_live_server

from fathom.config import Settings
from fathom.testing import ScriptedOpenAIServer, Turn

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


def test_extended_queries_are_searched_and_reported(served: tuple[LiveServer, ScriptedOpenAIServer]) -> None:
    server, scripted = served
    scripted.set_script([json.dumps(REWRITES)])
    with server.client(server.admin_key) as client:
        dataset_id = create_text_dataset(client)
        body = {
            "datasetId": dataset_id,
            "text": QUESTION,
            "searchMode": "mixedRecall",
            "datasetSearchUsingExtensionQuery": True,
            "datasetSearchExtensionBg": "A shop's customer service FAQ.",
        }
        result = ok(client.post("/api/core/dataset/searchTest", json=body))
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
        dataset_id = create_text_dataset(client)
        body = {"datasetId": dataset_id, "text": QUESTION, "datasetSearchUsingExtensionQuery": True}
        result = ok(client.post("/api/core/dataset/searchTest", json=body))
    assert "queryExtensionModel" not in result and result["list"]


def test_unknown_extension_model_falls_back_to_the_default_chat_model(
    served: tuple[LiveServer, ScriptedOpenAIServer],
) -> None:
    """As FastGPT's ``getLLMModel``: an id this server does not have runs on the default chat model."""
    server, scripted = served
    scripted.set_script([json.dumps(REWRITES)])
    with server.client(server.admin_key) as client:
        dataset_id = create_text_dataset(client)
        body = {
            "datasetId": dataset_id,
            "text": QUESTION,
            "datasetSearchUsingExtensionQuery": True,
            "datasetSearchExtensionModel": "gpt-4o-mini",
        }
        result = ok(client.post("/api/core/dataset/searchTest", json=body))
    assert result["queryExtensionModel"] == "scripted-chat"
