"""Routes the console's pickers and previews rely on, over real HTTP on loopback: the model list
(``/api/core/ai/model/list``) and the chunk preview before an import (``file/getPreviewChunks``), with
the Q&A-pair import it previews; the storage rules (Q&A rows, debug runs left out of the history) on
SQLite and PostgreSQL."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from live_support import LiveServer, free_port, ok, start_live_server

from fathom.config import Settings
from fathom.store.pg_embedded import EmbeddedPostgres

MODELS = (
    "default_chat: house-chat\n"
    "default_rerank: house-rerank\n"
    "models:\n"
    "  - {id: house-chat, name: House chat, type: llm, base_url: 'http://127.0.0.1:9/v1', api_key: sk-secret,"
    " max_context: 32000, max_response: 2000}\n"
    "  - {id: small-chat, type: llm, base_url: 'http://127.0.0.1:9/v1', input_price: 0.5}\n"
    "  - {id: house-rerank, type: rerank, base_url: 'http://127.0.0.1:9/v1'}\n"
)


@pytest.fixture
def storage_server(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    """A server on SQLite or PostgreSQL, for the rules that live in storage."""
    url = None
    if backend == "postgres":
        postgres: EmbeddedPostgres = request.getfixturevalue("postgres_server")
        url = postgres.create_database(f"console_{os.getpid()}_{tmp_path.name[-12:]}".replace("-", "_"))
    settings = Settings(data_dir=tmp_path / "data", port=free_port(), workers=1, database_url=url)
    yield from start_live_server(settings)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    root = tmp_path_factory.mktemp("console-api")
    models = root / "models.yaml"
    models.write_text(MODELS, encoding="utf-8")
    settings = Settings(data_dir=root / "data", port=free_port(), workers=1, models_file=models)
    yield from start_live_server(settings)


def test_model_list_names_every_configured_model_with_its_type_and_default(server: LiveServer) -> None:
    with server.client(server.admin_key) as client:
        items = ok(client.get("/api/core/ai/model/list"))
    by_id = {item["model"]: item for item in items}
    assert by_id["house-chat"]["type"] == "llm" and by_id["house-chat"]["isDefault"] is True
    assert by_id["house-chat"]["name"] == "House chat" and by_id["house-chat"]["maxContext"] == 32000
    assert by_id["small-chat"]["isDefault"] is False and by_id["small-chat"]["inputPrice"] == 0.5
    assert by_id["house-rerank"]["type"] == "rerank" and by_id["house-rerank"]["isDefault"] is True
    local = by_id["local/all-MiniLM-L6-v2-int8"]
    assert local["type"] == "embedding" and local["provider"] == "local" and local["isDefault"] is True
    assert [item["type"] for item in items if item["isDefault"]].count("llm") == 1


def test_model_list_never_shows_endpoints_or_keys(server: LiveServer) -> None:
    with server.client(server.admin_key) as client:
        response = client.post("/api/core/ai/model/list", json={})
    assert response.status_code == 200
    assert "sk-secret" not in response.text and "127.0.0.1:9" not in response.text


def test_model_list_needs_a_key(server: LiveServer) -> None:
    with server.client("") as client:
        response = client.get("/api/core/ai/model/list")
    assert response.status_code == 401


# Each sentence ends with a letter and ". ": FastGPT's splitter (the default rule) ends a sentence only
# there ("number 3. " is not a sentence end), so the chunk size and the overlap have places to cut.
LONG = "\n\n".join(
    f"## Section {n}\n\n"
    + " ".join(f"Sentence {n}.{k} explains the travel rule number {k} in full." for k in range(12))
    for n in range(6)
)


def _dataset(client: object) -> str:
    return str(ok(client.post("/api/core/dataset/create", json={"name": "Preview"})))  # type: ignore[attr-defined]


def _collections(client: object, dataset_id: str) -> list[dict[str, object]]:
    body = {"datasetId": dataset_id}
    return list(ok(client.post("/api/core/dataset/collection/listV2", json=body))["list"])  # type: ignore[attr-defined]


def test_preview_chunks_a_text_with_the_chosen_size_and_stores_nothing(server: LiveServer) -> None:
    with server.client(server.admin_key) as client:
        dataset_id = _dataset(client)
        body = {"datasetId": dataset_id, "text": LONG, "chunkSettingMode": "custom", "limit": 3}
        small = ok(client.post("/api/core/dataset/file/getPreviewChunks", json={**body, "chunkSize": 200}))
        large = ok(client.post("/api/core/dataset/file/getPreviewChunks", json={**body, "chunkSize": 2000}))
        assert small["chunkSize"] == 200 and large["chunkSize"] == 2000
        assert small["total"] > large["total"] >= 1
        assert len(small["chunks"]) == 3 and small["chunks"][0]["q"].startswith("## Section 0")
        assert all(chunk["chars"] <= 2 * 200 for chunk in small["chunks"])
        assert _collections(client, dataset_id) == []


def test_preview_applies_the_separator_and_the_overlap(server: LiveServer) -> None:
    with server.client(server.admin_key) as client:
        dataset_id = _dataset(client)
        text = "alpha part one===beta part two===gamma part three"
        body = {"datasetId": dataset_id, "text": text, "chunkSettingMode": "custom", "chunkSplitter": "==="}
        split = ok(client.post("/api/core/dataset/file/getPreviewChunks", json=body))
        assert [c["q"] for c in split["chunks"]] == ["alpha part one", "beta part two", "gamma part three"]
        prose = {"datasetId": dataset_id, "text": LONG, "chunkSettingMode": "custom", "chunkSize": 300}
        none = ok(
            client.post("/api/core/dataset/file/getPreviewChunks", json={**prose, "chunkOverlapRatio": 0})
        )
        some = ok(
            client.post("/api/core/dataset/file/getPreviewChunks", json={**prose, "chunkOverlapRatio": 0.4})
        )
        assert none["overlapRatio"] == 0 and some["overlapRatio"] == 0.4
        assert sum(c["chars"] for c in some["chunks"]) > sum(c["chars"] for c in none["chunks"])


def test_preview_follows_the_split_rule(server: LiveServer) -> None:
    with server.client(server.admin_key) as client:
        dataset_id = _dataset(client)
        text = "# Gateway\nIt checks every request.  \nTwice."
        body = {"datasetId": dataset_id, "text": text}
        fastgpt = ok(
            client.post("/api/core/dataset/file/getPreviewChunks", json={**body, "chunkSplitRule": "fastgpt"})
        )
        fathom = ok(
            client.post("/api/core/dataset/file/getPreviewChunks", json={**body, "chunkSplitRule": "fathom"})
        )
        assert (fastgpt["chunkSplitRule"], fathom["chunkSplitRule"]) == ("fastgpt", "fathom")
        assert [c["q"] for c in fastgpt["chunks"]] == [text]
        assert [c["q"] for c in fathom["chunks"]] == ["# Gateway\n\nIt checks every request.\nTwice."]
        bad = client.post("/api/core/dataset/file/getPreviewChunks", json={**body, "chunkSplitRule": "nltk"})
        assert bad.status_code == 400


def test_preview_of_an_uploaded_file_and_of_question_answer_pairs(server: LiveServer) -> None:
    with server.client(server.admin_key) as client:
        dataset_id = _dataset(client)
        data = json.dumps({"datasetId": dataset_id, "chunkSettingMode": "custom", "chunkSize": 300})
        files = {"file": ("guide.md", LONG.encode(), "text/markdown")}
        preview = ok(client.post("/api/core/dataset/file/getPreviewChunks", data={"data": data}, files=files))
        assert preview["total"] > 1 and preview["chunks"][0]["q"].startswith("## Section 0")
        table = "question,answer\nHow long is the visa?,Ninety days.\nHow heavy may a bag be?,23 kg\n"
        qa = json.dumps({"datasetId": dataset_id, "qaPairs": True})
        files = {"file": ("faq.csv", table.encode(), "text/csv")}
        pairs = ok(client.post("/api/core/dataset/file/getPreviewChunks", data={"data": qa}, files=files))
        assert pairs["qaPairs"] is True and pairs["total"] == 2
        assert pairs["chunks"][0] == {"q": "How long is the visa?", "a": "Ninety days.", "chars": 33}
        assert _collections(client, dataset_id) == []


def test_imported_question_answer_pairs_become_one_chunk_per_row(storage_server: LiveServer) -> None:
    server = storage_server
    with server.client(server.admin_key) as client:
        dataset_id = _dataset(client)
        table = "q,a\nHow long is the visa?,Ninety days.\nHow heavy may a bag be?,23 kg\n"
        body = {"datasetId": dataset_id, "name": "faq", "text": table, "qaPairs": True}
        collection_id = ok(client.post("/api/core/dataset/collection/create/text", json=body))["collectionId"]
        rows: list[dict[str, str]] = []
        for _ in range(100):
            if all(c["status"] == "ready" for c in _collections(client, dataset_id)):
                rows = ok(
                    client.post("/api/core/dataset/data/v2/list", json={"collectionId": collection_id})
                )["list"]
                break
            time.sleep(0.1)
        assert [(r["q"], r["a"]) for r in rows] == [
            ("How long is the visa?", "Ninety days."),
            ("How heavy may a bag be?", "23 kg"),
        ]


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("chunkOverlapRatio", 0.9, "chunkOverlapRatio"),
        ("qaPairs", "yes", "qaPairs"),
        ("limit", 500, "limit"),
        ("chunkSize", 10, "chunkSize"),
        ("text", "", "text"),
    ],
)
def test_preview_refuses_bad_settings_naming_the_field(
    server: LiveServer, field: str, value: object, expected: str
) -> None:
    with server.client(server.admin_key) as client:
        dataset_id = _dataset(client)
        body = {"datasetId": dataset_id, "text": LONG, "chunkSettingMode": "custom", field: value}
        response = client.post("/api/core/dataset/file/getPreviewChunks", json=body)
    assert response.status_code == 400, response.text
    assert expected in response.json()["message"]


GRAPH = {
    "nodes": [
        {"nodeId": "s", "name": "Start", "flowNodeType": "workflowStart", "inputs": [], "outputs": []},
        {
            "nodeId": "r",
            "name": "Reply",
            "flowNodeType": "answerNode",
            "inputs": [{"key": "text", "value": "debug reply", "valueType": "string"}],
            "outputs": [],
        },
    ],
    "edges": [
        {"source": "s", "target": "r", "sourceHandle": "s-source-right", "targetHandle": "r-target-left"}
    ],
    "chatConfig": {},
}


def test_debug_runs_stay_out_of_the_apps_chat_history(storage_server: LiveServer) -> None:
    server = storage_server
    with server.client(server.admin_key) as client:
        body = {"name": "Debugged", "type": "advanced", **GRAPH}
        app_id = ok(client.post("/api/core/app/create", json=body))
        question = {"appId": app_id, "messages": [{"role": "user", "content": "hi"}]}
        debug = client.post("/api/core/chat/chatTest", json={**question, "chatId": "debug-run-1", **GRAPH})
        assert debug.status_code == 200 and "debug reply" in debug.text
        user = client.post("/api/v1/chat/completions", json={**question, "chatId": "user-chat-1"})
        assert user.status_code == 200, user.text
        listed = ok(client.post("/api/core/chat/getHistories", json={"appId": app_id}))
        assert [c["chatId"] for c in listed["list"]] == ["user-chat-1"] and listed["total"] == 1
        debug_list = ok(client.post("/api/core/chat/getHistories", json={"appId": app_id, "source": "test"}))
        assert [c["chatId"] for c in debug_list["list"]] == ["debug-run-1"]


def _events(text: str, name: str) -> list[dict[str, Any]]:
    found = []
    for block in text.split("\n\n"):
        lines = block.split("\n")
        if f"event: {name}" in lines:
            found.append(json.loads("".join(line[6:] for line in lines if line.startswith("data: "))))
    return found


def test_chat_test_node_responses_carry_what_each_node_read_and_produced(server: LiveServer) -> None:
    reply = {
        "nodeId": "r",
        "name": "Reply",
        "flowNodeType": "answerNode",
        "inputs": [
            {"key": "text", "value": "debug reply", "valueType": "string"},
            {"key": "token", "value": "sk-live-123", "valueType": "string"},
        ],
        "outputs": [],
    }
    graph = {**GRAPH, "nodes": [GRAPH["nodes"][0], reply]}
    with server.client(server.admin_key) as client:
        app_id = ok(client.post("/api/core/app/create", json={"name": "Traced", "type": "advanced", **graph}))
        question = {"appId": app_id, "messages": [{"role": "user", "content": "hi"}]}
        debug = client.post("/api/core/chat/chatTest", json={**question, "chatId": "trace-1", **graph})
        user = client.post("/api/v1/chat/completions", json={**question, "detail": True, "stream": True})
    assert "sk-live-123" not in debug.text
    node = next(r for r in _events(debug.text, "flowNodeResponse") if r["nodeId"] == "r")
    assert node["nodeInputs"]["text"] == "debug reply" and node["nodeInputs"]["token"] == "***"
    assert isinstance(node["nodeOutputs"], dict)
    assert all("nodeInputs" not in r for r in _events(user.text, "flowNodeResponse"))
