"""Issue 31 item 6, through the HTTP API: the first-start demo's ingestion waits behind the user's own
imports (its jobs are queued at low priority), and an answer from a knowledge base still indexing says so
— a ``datasetIndexing`` SSE event in a detail stream and a ``datasetIndexing`` field in the detail JSON —
while an answer from a fully indexed one carries neither.

The server runs no in-process worker: the test runs the real ingestion worker one job at a time, so the
knowledge base is pending exactly until the test lets it be indexed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from chat_support import MODEL, ChatServer, free_port, parse_sse, simple_app_body, start_chat_server

from fathom.config import Settings
from fathom.demo import seed_demo
from fathom.platform import Platform
from fathom.testing import ScriptedOpenAIServer, text_turn

HANDBOOK = "Refunds are paid to the original card within five working days."
DEMO_DOCS = [
    ("guide.md", "# Guide\n\nTrips to Japan of up to ninety days need no visa."),
    ("faq.md", "# FAQ\n\nAsk."),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, scripted: ScriptedOpenAIServer) -> Iterator[ChatServer]:
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("indexing") / "data",
        port=free_port(),
        workers=0,
        openai_base_url=scripted.base_url,
        chat_model=MODEL,
    )
    yield from start_chat_server(settings, scripted)


def _data(response: Any) -> Any:
    body = response.json()
    assert body["code"] == 200, body
    return body["data"]


def _collections(server: ChatServer, dataset_id: str) -> list[dict[str, Any]]:
    with server.client() as client:
        page = _data(client.post("/api/core/dataset/collection/listV2", json={"datasetId": dataset_id}))
    return list(page["list"])


def _ask(server: ChatServer, app_id: str, *, stream: bool, detail: bool) -> Any:
    body = {
        "appId": app_id,
        "chatId": f"c-{stream}-{detail}",
        "stream": stream,
        "detail": detail,
        "messages": [{"role": "user", "content": "When do refunds arrive?"}],
    }
    with server.client() as client:
        response = client.post("/api/v1/chat/completions", json=body)
        assert response.status_code == 200, response.text
        return parse_sse(response.text) if stream else response.json()


def test_demo_waits_behind_the_users_import_and_an_answer_from_a_kb_still_indexing_says_so(
    server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    scripted.set_script(lambda request: text_turn("Within five working days."))

    async def seed(platform: Platform) -> Any:
        return await seed_demo(platform, server.boot.team_id, server.boot.member_id, DEMO_DOCS)

    demo = server.run(seed)  # the first start's demo, queued before the user's import
    with server.client() as client:
        kb = _data(client.post("/api/core/dataset/create", json={"name": "Handbook"}))
        body = {"datasetId": kb, "name": "refunds", "text": HANDBOOK}
        _data(client.post("/api/core/dataset/collection/create/text", json=body))
    [mine] = _collections(server, kb)
    demo_rows = _collections(server, demo.dataset_id)
    assert mine["status"] == "waiting" and mine["queuePosition"] == 1  # claimed next, ahead of the demo
    assert sorted(row["queuePosition"] for row in demo_rows) == [2, 3]

    app_id = server.create_app(simple_app_body("Handbook desk", datasets=[{"datasetId": kb}]))
    pending = {"datasetId": kb, "name": "Handbook", "pending": 1, "total": 1}
    frames = _ask(server, app_id, stream=True, detail=True)
    notices = [frame.json() for frame in frames if frame.event == "datasetIndexing"]
    assert len(notices) == 1 and notices[0]["datasets"] == [pending], notices
    assert "“Handbook” (1 of 1 documents not searchable yet)" in notices[0]["message"]
    [responses] = [frame.json() for frame in frames if frame.event == "flowResponses"]  # v1: after [DONE]
    [search] = [r for r in responses if r["moduleType"] == "datasetSearchNode"]
    assert search["datasetIndexing"] == [pending] and notices[0]["nodeId"] == search["nodeId"]
    assert _ask(server, app_id, stream=False, detail=True)["datasetIndexing"] == [pending]
    plain = _ask(server, app_id, stream=True, detail=False)  # OpenAI chunks only: no Fathom events
    assert not any(frame.event == "datasetIndexing" for frame in plain)

    async def one_job(platform: Platform) -> int:
        return await platform.new_worker(worker_id="test").run_until_idle(max_jobs=1)

    assert server.run(one_job) == 1  # the one job a worker takes first is the user's, not the demo's
    assert _collections(server, kb)[0]["status"] == "ready"
    assert {row["status"] for row in _collections(server, demo.dataset_id)} == {"waiting"}

    frames = _ask(server, app_id, stream=True, detail=True)
    assert not any(frame.event == "datasetIndexing" for frame in frames)
    [responses] = [frame.json() for frame in frames if frame.event == "flowResponses"]
    [search] = [r for r in responses if r["moduleType"] == "datasetSearchNode"]
    assert "datasetIndexing" not in search and search["quoteList"][0]["q"] == HANDBOOK
    answer = _ask(server, app_id, stream=False, detail=True)
    assert "datasetIndexing" not in answer and answer["choices"][0]["message"]["content"]
