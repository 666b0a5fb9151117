"""``POST /api/core/dataset/searchTest`` with ``usingReRank``: the default rerank model of the models file
(or the one named by ``rerankModel``) reorders the recalled chunks through a real ``/v1/rerank`` call; a
failing rerank endpoint falls back to the recall order; an unknown model reranks with the default one; with
no rerank model configured the search runs without rerank and says so. On SQLite and PostgreSQL."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from live_support import (
    LiveServer,
    backend_database_url,
    create_text_dataset,
    free_port,
    ok,
    start_live_server,
)

from fathom.config import Settings
from fathom.testing import ScriptedOpenAIServer, text_turn

QUERY = "When are refunds paid back to the card?"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed again when the block ends: connections are refused


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def reranking(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[tuple[LiveServer, ScriptedOpenAIServer]]:
    """A server with a rerank model, on SQLite and on PostgreSQL (issue 30: the ``reRank`` score type)."""
    database_url = backend_database_url(request, "rerank")
    # the scripted reranker prefers the warranty chunk, which recall ranks last for this query
    with ScriptedOpenAIServer(rerank_fn=lambda q, d: 0.9 if "warranty" in d.lower() else 0.1) as scripted:
        root = tmp_path_factory.mktemp(f"rerank_{request.param}")
        models = root / "models.yaml"
        models.write_text(
            "default_rerank: scripted-rerank\n"
            "models:\n"
            f"  - {{id: scripted-chat, type: llm, base_url: '{scripted.base_url}', max_retries: 0}}\n"
            f"  - {{id: scripted-rerank, type: rerank, base_url: '{scripted.base_url}', max_retries: 0}}\n"
            f"  - {{id: broken-rerank, type: rerank, base_url: 'http://127.0.0.1:{_closed_port()}/v1', "
            "max_retries: 0}\n",
            encoding="utf-8",
        )
        settings = Settings(
            data_dir=root / "data", port=free_port(), workers=1, models_file=models, database_url=database_url
        )
        for server in start_live_server(settings):
            yield server, scripted


def test_default_rerank_model_reorders_the_results(
    reranking: tuple[LiveServer, ScriptedOpenAIServer],
) -> None:
    server, scripted = reranking
    with server.client(server.admin_key) as client:
        dataset_id = create_text_dataset(client)
        query = {"datasetId": dataset_id, "text": QUERY, "searchMode": "mixedRecall"}
        plain = ok(client.post("/api/core/dataset/searchTest", json=query))
        assert "Refunds" in plain["list"][0]["q"] and plain["usingReRank"] is False
        before = len(scripted.rerank_requests)

        ranked = ok(
            client.post(
                "/api/core/dataset/searchTest", json={**query, "usingReRank": True, "rerankWeight": 1}
            )
        )
        assert ranked["usingReRank"] is True
        top = ranked["list"][0]
        assert "Warranty" in top["q"]
        assert {"type": "reRank", "value": 0.9, "index": 0} in top["score"]
        assert "reRank" in [stage["stage"] for stage in top["trace"]["stages"]]
        requests = scripted.rerank_requests[before:]
        assert len(requests) == 1 and requests[0]["model"] == "scripted-rerank"
        assert requests[0]["query"] == QUERY


def test_failing_rerank_model_falls_back_to_the_recall_order(
    reranking: tuple[LiveServer, ScriptedOpenAIServer],
) -> None:
    server, _ = reranking
    with server.client(server.admin_key) as client:
        dataset_id = create_text_dataset(client)
        body = {"datasetId": dataset_id, "text": QUERY, "searchMode": "mixedRecall", "usingReRank": True}
        result = ok(
            client.post("/api/core/dataset/searchTest", json={**body, "rerankModel": "broken-rerank"})
        )
        assert result["usingReRank"] is False
        assert "Refunds" in result["list"][0]["q"]
        assert not any(s["type"] == "reRank" for item in result["list"] for s in item["score"])


def test_unknown_rerank_model_falls_back_and_a_bad_type_is_a_clear_400(
    reranking: tuple[LiveServer, ScriptedOpenAIServer],
) -> None:
    """As FastGPT's ``getRerankModel``: an id this server lacks reranks with the default rerank model."""
    server, _ = reranking
    with server.client(server.admin_key) as client:
        dataset_id = create_text_dataset(client)
        body = {"datasetId": dataset_id, "text": QUERY, "usingReRank": True}
        fallback = ok(
            client.post("/api/core/dataset/searchTest", json={**body, "rerankModel": "bge-reranker"})
        )
        assert fallback["usingReRank"] is True
        response = client.post("/api/core/dataset/searchTest", json={**body, "rerankModel": 17})
        assert response.status_code == 400, response.text
        assert "rerankModel" in response.text and "string" in response.text


def test_without_a_rerank_model_the_search_runs_without_rerank(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", port=free_port(), workers=1)
    for server in start_live_server(settings):
        with server.client(server.admin_key) as client:
            dataset_id = create_text_dataset(client)
            body = {"datasetId": dataset_id, "text": QUERY, "usingReRank": True, "searchMode": "mixedRecall"}
            result = ok(client.post("/api/core/dataset/searchTest", json=body))
            assert result["usingReRank"] is False and "Refunds" in result["list"][0]["q"]


def _nodes_of_a_chat(
    client: Any, scripted: ScriptedOpenAIServer, setting: dict[str, Any], dataset_id: str
) -> Any:
    """A simple app on ``dataset_id`` with the search ``setting``, published and asked ``QUERY``: the
    response data of its nodes by type."""
    body = {
        "name": "Searching",
        "type": "simple",
        "simpleConfig": {
            "model": "scripted-chat",
            "datasets": [{"datasetId": dataset_id}],
            "datasetSearchSetting": setting,
        },
    }
    app_id = ok(client.post("/api/core/app/create", json=body))
    ok(client.post("/api/core/app/version/publish", json={"appId": app_id}))
    scripted.set_script([text_turn("Five working days.")])
    reply = client.post(
        "/api/v1/chat/completions",
        json={"appId": app_id, "detail": True, "messages": [{"role": "user", "content": QUERY}]},
        timeout=30,
    ).json()
    return {r["moduleType"]: r for r in reply["responseData"]}


def test_a_simple_apps_rerank_model_reorders_its_quotes(
    reranking: tuple[LiveServer, ScriptedOpenAIServer],
) -> None:
    server, scripted = reranking
    with server.client(server.admin_key) as client:
        dataset_id = create_text_dataset(client)
        setting = {"searchMode": "mixedRecall", "usingReRank": True, "rerankWeight": 1}
        before = len(scripted.rerank_requests)
        search = _nodes_of_a_chat(
            client, scripted, {**setting, "rerankModel": "scripted-rerank"}, dataset_id
        )["datasetSearchNode"]
        assert search["searchUsingReRank"] is True
        assert "Warranty" in search["quoteList"][0]["q"]
        assert [r["model"] for r in scripted.rerank_requests[before:]] == ["scripted-rerank"]

        # the named model is the one used: a broken one falls back although the default works
        search = _nodes_of_a_chat(client, scripted, {**setting, "rerankModel": "broken-rerank"}, dataset_id)[
            "datasetSearchNode"
        ]
        assert search["searchUsingReRank"] is False and "Refunds" in search["quoteList"][0]["q"]


def test_an_apps_quotes_are_search_tests_list_and_search_test_shows_what_was_cut(
    reranking: tuple[LiveServer, ScriptedOpenAIServer],
) -> None:
    """A workflow's search leaves the cut items out (nobody sees them there), searchTest shows them: the
    same query and settings give the chat's quotes and searchTest's list alike, traces included."""
    server, scripted = reranking
    sections = [
        f"## Topic {n}\n\n" + f"Refunds rule number {n} says card payments return. " * 40 for n in range(6)
    ]
    with server.client(server.admin_key) as client:
        dataset_id = create_text_dataset(client, "\n\n".join(sections), name="Cut")
        setting = {"searchMode": "mixedRecall", "limit": 100, "similarity": 0}
        tested = ok(
            client.post(
                "/api/core/dataset/searchTest", json={"datasetId": dataset_id, "text": QUERY, **setting}
            )
        )
        assert tested["list"] and tested["cutList"], tested
        assert {item["trace"]["cutBy"] for item in tested["cutList"]} == {"tokenBudget"}
        nodes = _nodes_of_a_chat(client, scripted, setting, dataset_id)
        search, chat = nodes["datasetSearchNode"], nodes["chatNode"]

        def shown(items: list[dict[str, Any]]) -> list[tuple[str, list[tuple[str, Any]]]]:
            return [(i["id"], [(s["stage"], s.get("rank")) for s in i["trace"]["stages"]]) for i in items]

        assert shown(search["quoteList"]) == shown(tested["list"])
        # every quote is within the AI chat node's budget: all reach the model (its response shows none)
        assert "quoteList" not in chat
        sent = " ".join(str(m["content"]) for m in scripted.chat_requests[-1]["messages"])
        assert all(q["q"] in sent for q in search["quoteList"])


def test_newest_fastgpt_drift_a_knowledge_base_answer_lists_its_quotes_once(
    reranking: tuple[LiveServer, ScriptedOpenAIServer],
) -> None:
    """FastGPT up to 4.6 also put the kept quotes on the AI chat node; its newest reports them on the
    search node only, and the history's ``totalQuoteList`` is those: each quote once, as stored."""
    server, scripted = reranking
    with server.client(server.admin_key) as client:
        dataset_id = create_text_dataset(client)
        body = {
            "name": "Quoting",
            "type": "simple",
            "simpleConfig": {"model": "scripted-chat", "datasets": [{"datasetId": dataset_id}]},
        }
        app_id = ok(client.post("/api/core/app/create", json=body))
        ok(client.post("/api/core/app/version/publish", json={"appId": app_id}))
        scripted.set_script([text_turn("Five working days.")])
        question = {"role": "user", "content": QUERY}
        chat = {"appId": app_id, "chatId": "quoted-once", "detail": True, "messages": [question]}
        nodes = client.post("/api/v1/chat/completions", json=chat, timeout=30).json()["responseData"]
        assert [n["moduleType"] for n in nodes if "quoteList" in n] == ["datasetSearchNode"]
        quotes = [q["id"] for q in nodes[1]["quoteList"]]
        assert quotes and len(set(quotes)) == len(quotes)
        page = {"appId": app_id, "chatId": "quoted-once", "offset": 0, "pageSize": 10}
        records = ok(client.post("/api/core/chat/getPaginationRecords", json=page))["list"]
        answer = next(r for r in records if r["obj"] == "AI")
        assert [q["id"] for q in answer["totalQuoteList"]] == quotes
