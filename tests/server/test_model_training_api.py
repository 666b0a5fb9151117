"""Model-made training through the HTTP API, on SQLite and PostgreSQL, with the scripted model: a
``trainingType: "qa"`` import sends each chunk to the knowledge base's model with the default QA
instructions (or the collection's ``qaPrompt``) and stores the question/answer pairs it wrote, parsed as
FastGPT's ``formatSplitText`` parses them; ``autoIndexes`` stores the index texts the model wrote as typed
extra indexes; ``pushData`` with ``trainingType: "qa"`` trains the pushed rows. A chunk the model keeps
failing on is retried by the model client, then kept with its error (``getTrainingError``,
``trainingDetail``, ``getDatasetTrainingQueue``, ``hasError``), ``updateTrainingData`` retries it, and
``getTrainingDataDetail`` / ``deleteTrainingData`` read and delete it."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from live_support import LiveServer, backend_database_url, free_port, ok, start_live_server

from fathom.config import Settings
from fathom.knowledge.model_training import QA_INSTRUCTIONS
from fathom.testing import ScriptedOpenAIServer, Turn
from fathom.testing.scripted_openai import RecordedRequest

PARAGRAPHS = [
    "Refunds are paid back to the original card within five working days.",
    "Parcels ship from Rotterdam and arrive within three days in the EU.",
    "Every device carries a two year warranty against manufacturing faults.",
]
TEXT = "\n\n".join(PARAGRAPHS)
SMALL_CHUNKS = {"chunkSettingMode": "custom", "chunkSplitMode": "char", "chunkSplitter": "\n\n"}
CONTEXT = re.compile(r"<Context>\n(.*?)\n</Context>", re.S)
USAGE = (100, 7)  # (prompt, completion) tokens the scripted model reports per call


def chunk_of(request: RecordedRequest) -> str:
    """The chunk a training prompt carries (the last <Context> block: the first is the format's)."""
    return CONTEXT.findall(request.messages[-1]["content"])[-1].strip()


def qa_reply(request: RecordedRequest) -> Turn:
    """Two pairs per chunk, numbered as FastGPT's prompt asks, with a literal \\n in the second answer."""
    first = chunk_of(request).split()[0]
    answer = (
        f"Q1: What does the text say about {first}?\nA1: {chunk_of(request)}\n"
        f"Q2: Where is {first} described?\nA2: In the shop's FAQ.\\nSee the help page."
    )
    return Turn(content=answer, usage=USAGE)


def auto_reply(request: RecordedRequest) -> Turn:
    first = chunk_of(request).split()[0]
    return Turn(content=f"Summary: all about {first}.\n- Question: How do {first} work?\n", usage=USAGE)


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LiveServer, ScriptedOpenAIServer]]:
    database_url = backend_database_url(request, "model_training")
    with ScriptedOpenAIServer() as scripted:
        root = tmp_path_factory.mktemp(request.param)
        settings = Settings(
            data_dir=root / "data",
            port=free_port(),
            workers=1,
            openai_base_url=scripted.base_url,
            chat_model="scripted-chat",
            database_url=database_url,
        )
        for server in start_live_server(settings):
            yield server, scripted


@pytest.fixture
def client(served: tuple[LiveServer, ScriptedOpenAIServer]) -> Iterator[httpx.Client]:
    with served[0].client(served[0].admin_key) as client:
        yield client


@pytest.fixture
def scripted(served: tuple[LiveServer, ScriptedOpenAIServer]) -> ScriptedOpenAIServer:
    served[1].clear()
    return served[1]


def listed(client: httpx.Client, dataset_id: str, collection_id: str) -> dict[str, Any]:
    page = ok(client.post("/api/core/dataset/collection/listV2", json={"datasetId": dataset_id}))
    return next(item for item in page["list"] if item["_id"] == collection_id)


def wait_trained(client: httpx.Client, dataset_id: str, collection_id: str) -> dict[str, Any]:
    """The collection's list entry once nothing is left to train (failed chunks do not count)."""
    deadline = time.monotonic() + 90
    while (item := listed(client, dataset_id, collection_id))["trainingAmount"] or item["status"] != "ready":
        assert time.monotonic() < deadline, item
        time.sleep(0.1)
    return item


def rows_of(client: httpx.Client, collection_id: str) -> list[dict[str, Any]]:
    body = {"collectionId": collection_id, "pageSize": 30}
    return list(ok(client.post("/api/core/dataset/data/v2/list", json=body))["list"])


def new_dataset(client: httpx.Client, name: str) -> str:
    return str(ok(client.post("/api/core/dataset/create", json={"name": name})))


def import_text(client: httpx.Client, dataset_id: str, *, one_chunk: bool = False, **fields: Any) -> str:
    """Import :data:`TEXT` as one chunk per paragraph (or, with ``one_chunk``, as one chunk)."""
    body = {
        "datasetId": dataset_id,
        "name": "faq",
        "text": TEXT,
        **({} if one_chunk else SMALL_CHUNKS),
        **fields,
    }
    return str(ok(client.post("/api/core/dataset/collection/create/text", json=body))["collectionId"])


def test_qa_import_stores_the_pairs_the_model_wrote(
    client: httpx.Client, scripted: ScriptedOpenAIServer
) -> None:
    scripted.set_script(qa_reply)
    dataset_id = new_dataset(client, "QA")
    bill_id = ok(client.post("/api/support/wallet/usage/createTrainingUsage", json={"datasetId": dataset_id}))
    collection_id = import_text(client, dataset_id, trainingType="qa", billId=bill_id)
    item = wait_trained(client, dataset_id, collection_id)
    assert item["trainingType"] == "qa" and not item["hasError"] and item["dataAmount"] == 6

    # each chunk went to the model once, as FastGPT's one user message: the instructions, then the chunk
    sent = [request.messages for request in scripted.requests_to("/chat/completions")]
    assert len(sent) == 3 and all(len(messages) == 1 and messages[0]["role"] == "user" for messages in sent)
    assert {chunk_of(request) for request in scripted.requests_to("/chat/completions")} == set(PARAGRAPHS)
    assert all(messages[0]["content"].startswith(QA_INSTRUCTIONS) for messages in sent)

    rows = rows_of(client, collection_id)
    pairs = sorted((row["chunkIndex"], row["q"], row["a"]) for row in rows)
    assert pairs == sorted(
        pair
        for index, paragraph in enumerate(PARAGRAPHS)
        for pair in [
            (index, f"What does the text say about {paragraph.split()[0]}?", paragraph),
            (index, f"Where is {paragraph.split()[0]} described?", "In the shop's FAQ.\nSee the help page."),
        ]
    )
    assert all(row["indexes"] and row["indexes"][0]["type"] == "default" for row in rows)  # embedded
    found = ok(
        client.post(
            "/api/core/dataset/searchTest",
            json={
                "datasetId": dataset_id,
                "text": "Where is Parcels described?",
                "searchMode": "mixedRecall",
            },
        )
    )
    assert any(hit["q"] == "Where is Parcels described?" for hit in found["list"])

    # the model's usage went to the training bill, beside the embedding's
    summary = ok(client.get("/api/support/usage/summary"))
    (bill,) = [entry for entry in summary["byBill"] if entry["billId"] == bill_id]
    assert bill["outputTokens"] == 3 * USAGE[1] and bill["inputTokens"] > 3 * USAGE[0]

    detail = ok(
        client.get("/api/core/dataset/collection/trainingDetail", params={"collectionId": collection_id})
    )
    assert detail["trainingType"] == "qa" and detail["errorCounts"]["qa"] == 0
    assert detail["trainingCounts"]["qa"] == 0 and detail["trainedCount"] == 6


def test_qa_prompt_replaces_the_default_instructions(
    client: httpx.Client, scripted: ScriptedOpenAIServer
) -> None:
    scripted.set_script(lambda request: "Q1: Who pays refunds?\nA1: The shop, to the original card.")
    dataset_id = new_dataset(client, "QA prompt")
    collection_id = import_text(
        client,
        dataset_id,
        trainingType="qa",
        qaPrompt="Write FAQ entries for support agents.",
        one_chunk=True,
    )
    wait_trained(client, dataset_id, collection_id)
    (request,) = scripted.requests_to("/chat/completions")
    content = request.messages[0]["content"]
    assert content.startswith("Write FAQ entries for support agents.") and QA_INSTRUCTIONS not in content
    assert "Q1:" in content and PARAGRAPHS[1] in chunk_of(request)
    assert [(r["q"], r["a"]) for r in rows_of(client, collection_id)] == [
        ("Who pays refunds?", "The shop, to the original card.")
    ]
    assert ok(client.get("/api/core/dataset/collection/detail", params={"id": collection_id}))[
        "qaPrompt"
    ] == ("Write FAQ entries for support agents.")


def test_an_answer_without_pairs_keeps_the_chunk(
    client: httpx.Client, scripted: ScriptedOpenAIServer
) -> None:
    """FastGPT's fallback: no ``Q<n>:``/``A<n>:`` pair in the answer stores the chunk's text itself."""
    scripted.set_script(lambda request: "I cannot find any questions in this text.")
    dataset_id = new_dataset(client, "No pairs")
    collection_id = import_text(client, dataset_id, trainingType="qa", one_chunk=True)
    wait_trained(client, dataset_id, collection_id)
    assert [(r["q"], r["a"]) for r in rows_of(client, collection_id)] == [(TEXT, "")]


def test_auto_indexes_are_stored_as_typed_extra_indexes(
    client: httpx.Client, scripted: ScriptedOpenAIServer
) -> None:
    scripted.set_script(auto_reply)
    dataset_id = new_dataset(client, "Auto")
    collection_id = import_text(client, dataset_id, trainingType="chunk", autoIndexes=True)
    wait_trained(client, dataset_id, collection_id)
    assert len(scripted.requests_to("/chat/completions")) == 3
    rows = sorted(rows_of(client, collection_id), key=lambda row: row["chunkIndex"])
    assert [(row["q"], row["a"]) for row in rows] == [(p, "") for p in PARAGRAPHS]
    for row, paragraph in zip(rows, PARAGRAPHS, strict=True):
        first = paragraph.split()[0]
        assert sorted((i["type"], i["text"]) for i in row["indexes"]) == [
            ("default", paragraph),
            ("question", f"How do {first} work?"),
            ("summary", f"all about {first}."),
        ]
    detail = ok(
        client.get("/api/core/dataset/collection/trainingDetail", params={"collectionId": collection_id})
    )
    assert detail["advancedTraining"]["autoIndexes"] is True and detail["trainingType"] == "chunk"


def test_push_data_in_qa_mode_trains_the_rows(client: httpx.Client, scripted: ScriptedOpenAIServer) -> None:
    scripted.set_script(qa_reply)
    dataset_id = new_dataset(client, "Push QA")
    collection_id = ok(
        client.post(
            "/api/core/dataset/collection/create",
            json={"datasetId": dataset_id, "name": "pushed", "type": "virtual"},
        )
    )
    pushed = ok(
        client.post(
            "/api/core/dataset/data/pushData",
            json={
                "collectionId": collection_id,
                "trainingType": "qa",
                "prompt": "Make support FAQ pairs.",
                "data": [{"q": PARAGRAPHS[0]}, {"q": PARAGRAPHS[2]}],
            },
        )
    )
    assert pushed["insertLen"] == 2
    wait_trained(client, dataset_id, collection_id)
    sent = scripted.requests_to("/chat/completions")
    assert all(request.messages[0]["content"].startswith("Make support FAQ pairs.") for request in sent)
    rows = rows_of(client, collection_id)
    assert sorted({row["a"] for row in rows if row["q"].startswith("What")}) == sorted(
        [PARAGRAPHS[0], PARAGRAPHS[2]]
    )
    assert len(rows) == 4


def test_a_failing_chunk_is_retried_kept_with_its_error_then_retried_by_the_route(
    client: httpx.Client, scripted: ScriptedOpenAIServer
) -> None:
    def flaky(request: RecordedRequest) -> Turn:
        if chunk_of(request) == PARAGRAPHS[1]:
            return Turn(status=500, error="the model is overloaded")
        return qa_reply(request)

    scripted.set_script(flaky)
    dataset_id = new_dataset(client, "Failing")
    collection_id = import_text(client, dataset_id, trainingType="qa")
    item = wait_trained(client, dataset_id, collection_id)
    assert item["hasError"] and item["trainingErrorCount"] == 1 and item["dataAmount"] == 4
    # the model client retried the chunk with backoff (1 + max_retries 2) before keeping the error
    asked = [chunk_of(request) for request in scripted.requests_to("/chat/completions")]
    assert asked.count(PARAGRAPHS[1]) == 3

    errors = ok(
        client.post("/api/core/dataset/training/getTrainingError", json={"collectionId": collection_id})
    )
    assert errors["total"] == 1
    (failed,) = errors["list"]
    assert failed["mode"] == "qa" and failed["q"] == PARAGRAPHS[1] and failed["chunkIndex"] == 1
    assert "overloaded" in failed["errorMsg"] and failed["collectionId"] == collection_id
    detail = ok(
        client.get("/api/core/dataset/collection/trainingDetail", params={"collectionId": collection_id})
    )
    assert detail["errorCounts"]["qa"] == 1 and detail["trainingCounts"]["qa"] == 0
    queue = ok(
        client.get("/api/core/dataset/training/getDatasetTrainingQueue", params={"datasetId": dataset_id})
    )
    assert queue == {"rebuildingCount": 0, "trainingCount": 1}

    scripted.set_script(qa_reply)  # the model is back
    retried = client.put(
        "/api/core/dataset/training/updateTrainingData",
        json={"datasetId": dataset_id, "collectionId": collection_id, "dataId": failed["_id"]},
    )
    assert retried.status_code == 200 and retried.json()["data"] is None
    item = wait_trained(client, dataset_id, collection_id)
    assert not item["hasError"] and item["dataAmount"] == 6
    assert sorted(row["chunkIndex"] for row in rows_of(client, collection_id)) == [0, 0, 1, 1, 2, 2]
    errors = ok(
        client.post("/api/core/dataset/training/getTrainingError", json={"collectionId": collection_id})
    )
    assert errors == {"list": [], "total": 0}
    queue = ok(
        client.post("/api/core/dataset/training/getDatasetTrainingQueue", json={"datasetId": dataset_id})
    )
    assert queue["trainingCount"] == 0


def test_a_failed_chunk_is_read_then_deleted_by_the_training_data_routes(
    client: httpx.Client, scripted: ScriptedOpenAIServer
) -> None:
    """FastGPT's ``getTrainingDataDetail`` and ``deleteTrainingData`` with the documented body
    ``{datasetId, collectionId, dataId}``: the detail of a failed chunk, then deleting it, after which the
    collection has no error left and the chunk is never trained."""
    scripted.set_script(
        lambda request: (
            Turn(status=400, error="no such request")
            if chunk_of(request) == PARAGRAPHS[2]
            else qa_reply(request)
        )
    )
    dataset_id = new_dataset(client, "Delete failed")
    collection_id = import_text(client, dataset_id, trainingType="qa")
    assert wait_trained(client, dataset_id, collection_id)["trainingErrorCount"] == 1
    errors = ok(
        client.post("/api/core/dataset/training/getTrainingError", json={"collectionId": collection_id})
    )
    data_id = errors["list"][0]["_id"]
    body = {"datasetId": dataset_id, "collectionId": collection_id, "dataId": data_id}

    detail = client.post("/api/core/dataset/training/getTrainingDataDetail", json=body)
    assert detail.status_code == 200 and detail.json()["code"] == 200
    assert detail.json()["data"] == {
        "_id": data_id,
        "datasetId": dataset_id,
        "mode": "qa",
        "q": PARAGRAPHS[2],
        "a": "",
    }
    other = import_text(client, dataset_id, name="other", trainingType="chunk")
    elsewhere = {**body, "collectionId": other}
    assert ok(client.post("/api/core/dataset/training/getTrainingDataDetail", json=elsewhere)) is None
    wrong_dataset = {**body, "datasetId": new_dataset(client, "Not its knowledge base")}
    refused = client.post("/api/core/dataset/training/deleteTrainingData", json=wrong_dataset)
    assert refused.status_code == 400 and refused.json()["statusText"] == "invalidParams"
    assert refused.json()["message"].startswith("datasetId: ")

    deleted = client.post("/api/core/dataset/training/deleteTrainingData", json=body)
    assert deleted.status_code == 200 and deleted.json()["code"] == 200 and deleted.json()["data"] == {}
    assert ok(client.post("/api/core/dataset/training/getTrainingDataDetail", json=body)) is None
    item = listed(client, dataset_id, collection_id)
    assert not item["hasError"] and item["trainingErrorCount"] == 0 and item["trainingAmount"] == 0
    assert item["dataAmount"] == 4
    errors = ok(
        client.post("/api/core/dataset/training/getTrainingError", json={"collectionId": collection_id})
    )
    assert errors == {"list": [], "total": 0}
    wait_trained(client, dataset_id, other)
    queue = ok(
        client.post("/api/core/dataset/training/getDatasetTrainingQueue", json={"datasetId": dataset_id})
    )
    assert queue["trainingCount"] == 0

    again = client.post("/api/core/dataset/training/deleteTrainingData", json=body)
    assert again.status_code == 404 and again.json()["message"].startswith("dataId: ")
    without = client.post(
        "/api/core/dataset/training/deleteTrainingData", json={"collectionId": collection_id}
    )
    assert without.status_code == 400 and "dataId" in without.json()["message"]


def test_retrying_everything_failed_in_a_dataset(
    client: httpx.Client, scripted: ScriptedOpenAIServer
) -> None:
    scripted.set_script(lambda request: Turn(status=400, error="this model takes no such request"))
    dataset_id = new_dataset(client, "All failed")
    collection_id = import_text(client, dataset_id, trainingType="qa")
    wait_trained(client, dataset_id, collection_id)
    assert len(scripted.requests_to("/chat/completions")) == 3  # a 400 is not retried
    errors = ok(
        client.post("/api/core/dataset/training/getTrainingError", json={"collectionId": collection_id})
    )
    assert errors["total"] == 3 and all("no such request" in e["errorMsg"] for e in errors["list"])
    scripted.set_script(qa_reply)
    ok(client.post("/api/core/dataset/training/updateTrainingData", json={"datasetId": dataset_id}))
    item = wait_trained(client, dataset_id, collection_id)
    assert not item["hasError"] and item["dataAmount"] == 6


def test_refusals_name_the_field(client: httpx.Client) -> None:
    dataset_id = new_dataset(client, "Refusals")
    image = client.post(
        "/api/core/dataset/collection/create/text",
        json={"datasetId": dataset_id, "name": "x", "text": TEXT, "imageIndex": True},
    )
    assert image.status_code == 400 and image.json()["message"].startswith("imageIndex: ")
    assert "vlmModel" in image.json()["message"] and "vision: true" in image.json()["message"]
    nothing = client.post("/api/core/dataset/training/updateTrainingData", json={})
    assert nothing.status_code == 400 and "dataId, collectionId or datasetId" in nothing.json()["message"]
    unknown = client.post(
        "/api/core/dataset/training/updateTrainingData",
        json={"datasetId": dataset_id, "dataId": "0123456789abcdef01234567"},
    )
    assert unknown.status_code == 404


@pytest.fixture
def modelless(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[LiveServer]:
    """A server with no chat model configured, on each backend."""
    database_url = None
    if backend == "postgres":
        database_url = request.getfixturevalue("postgres_server").create_database(
            f"modelless_{os.getpid()}_{free_port()}"
        )
    settings = Settings(data_dir=tmp_path / "data", port=free_port(), workers=1, database_url=database_url)
    yield from start_live_server(settings)


def test_model_training_without_a_chat_model_is_refused(modelless: LiveServer) -> None:
    with modelless.client(modelless.admin_key) as client:
        dataset_id = new_dataset(client, "No model")
        answer = client.post(
            "/api/core/dataset/collection/create/text",
            json={"datasetId": dataset_id, "name": "x", "text": TEXT, "trainingType": "qa"},
        )
        assert answer.status_code == 400, answer.text
        message = answer.json()["message"]
        assert message.startswith('trainingType "qa": ') and "chat model" in message
        auto = client.post(
            "/api/core/dataset/collection/create/text",
            json={"datasetId": dataset_id, "name": "x", "text": TEXT, "autoIndexes": True},
        )
        assert auto.status_code == 400 and auto.json()["message"].startswith("autoIndexes: ")
