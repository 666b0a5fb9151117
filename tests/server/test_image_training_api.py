"""Image indexes through the HTTP API, on SQLite and PostgreSQL, with the scripted model as the vision model:
with ``imageIndex: true`` every image embedded in an imported document (a Markdown ``data:`` image, a picture
of a Word file) is sent to the knowledge base's ``vlmModel`` as an ``image_url`` part beside the chunk that
holds it, and its description becomes an ``image`` index of that chunk, so that a search for what the image
shows finds the chunk; an uploaded png is an image collection whose chunk is the description. Images a
document only links to are never fetched. A description the model fails on is kept with its error and
retried by ``updateTrainingData``; the vision model's usage goes to the training bill."""

from __future__ import annotations

import base64
import io
import struct
import time
import zlib
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from live_support import LiveServer, backend_database_url, free_port, ok, start_live_server

from fathom.config import Settings
from fathom.testing import ScriptedOpenAIServer, Turn
from fathom.testing.scripted_openai import RecordedRequest

USAGE = (300, 11)  # (prompt, completion) tokens the scripted vision model reports per call
SMALL_CHUNKS = {"chunkSettingMode": "custom", "chunkSplitMode": "char", "chunkSplitter": "\n\n"}


def png(red: int, green: int, blue: int) -> bytes:
    """A valid 2x2 PNG of one colour (distinct colours: distinct images)."""
    raw = b"".join(b"\x00" + bytes((red, green, blue)) * 2 for _ in range(2))

    def part(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + part(b"IHDR", header) + part(b"IDAT", zlib.compress(raw)) + part(b"IEND", b"")
    )


def data_url(image: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(image).decode()


CHART, MAP, PHOTO = png(200, 10, 10), png(10, 200, 10), png(10, 10, 200)
DESCRIPTIONS = {
    data_url(CHART): "A bar chart of lighthouse keeper salaries rising every decade since 1950.",
    data_url(MAP): "A map of the ferry routes between the harbour islands, with departure piers.",
    data_url(PHOTO): "A photograph of a red bicycle leaning against a stone garden wall.",
}
DOCUMENT = (
    "# Handbook\n\n"
    "Refunds are paid back to the original card within five working days.\n\n"
    f"The chart below explains pay. ![pay chart]({data_url(CHART)})\n\n"
    f"Ferries leave hourly. ![routes]({data_url(MAP)}) ![logo](https://example.invalid/logo.png)\n\n"
    "Every device carries a two year warranty against manufacturing faults."
)


def image_url_of(request: RecordedRequest) -> str | None:
    """The ``image_url`` of a chat request's last message, if it has one."""
    content = request.messages[-1]["content"] if request.messages else ""
    if isinstance(content, list):
        for part in content:
            if part.get("type") == "image_url":
                return str(part["image_url"]["url"])
    return None


def describe(request: RecordedRequest) -> Turn:
    url = image_url_of(request)
    return Turn(content=DESCRIPTIONS.get(url or "", "A picture."), usage=USAGE)


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LiveServer, ScriptedOpenAIServer]]:
    database_url = backend_database_url(request, "image_training")
    with ScriptedOpenAIServer() as scripted:
        root = tmp_path_factory.mktemp(request.param)
        models = root / "models.yaml"
        models.write_text(
            "models:\n"
            f"  - {{id: scripted-vision, type: llm, vision: true, base_url: '{scripted.base_url}', "
            "input_price: 1, output_price: 2}\n",
            encoding="utf-8",
        )
        settings = Settings(
            data_dir=root / "data",
            port=free_port(),
            workers=1,
            models_file=models,
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
    served[1].set_script(describe)
    return served[1]


def wait_trained(client: httpx.Client, dataset_id: str, collection_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 90
    while True:
        page = ok(client.post("/api/core/dataset/collection/listV2", json={"datasetId": dataset_id}))
        item = next(entry for entry in page["list"] if entry["_id"] == collection_id)
        if not item["trainingAmount"] and item["status"] == "ready":
            return item
        assert time.monotonic() < deadline, item
        time.sleep(0.1)


def rows_of(client: httpx.Client, collection_id: str) -> list[dict[str, Any]]:
    body = {"collectionId": collection_id, "pageSize": 30}
    rows = ok(client.post("/api/core/dataset/data/v2/list", json=body))["list"]
    return sorted(rows, key=lambda row: row["chunkIndex"])


def search(client: httpx.Client, dataset_id: str, text: str) -> list[dict[str, Any]]:
    return list(
        ok(client.post("/api/core/dataset/searchTest", json={"datasetId": dataset_id, "text": text}))["list"]
    )


def new_dataset(client: httpx.Client, name: str, **fields: Any) -> str:
    return str(ok(client.post("/api/core/dataset/create", json={"name": name, **fields})))


def test_images_in_a_document_become_image_indexes_of_their_chunks(
    client: httpx.Client, scripted: ScriptedOpenAIServer
) -> None:
    dataset_id = new_dataset(client, "Handbook", vlmModel="scripted-vision")
    assert ok(client.get("/api/core/dataset/detail", params={"id": dataset_id}))["vlmModel"]["model"] == (
        "scripted-vision"
    )
    bill_id = ok(client.post("/api/support/wallet/usage/createTrainingUsage", json={"datasetId": dataset_id}))
    created = ok(
        client.post(
            "/api/core/dataset/collection/create/text",
            json={
                "datasetId": dataset_id,
                "name": "handbook",
                "text": DOCUMENT,
                "imageIndex": True,
                "billId": bill_id,
                **SMALL_CHUNKS,
            },
        )
    )
    collection_id = created["collectionId"]
    assert created["results"]["insertLen"] == 5
    item = wait_trained(client, dataset_id, collection_id)
    assert item["imageIndex"] is True and not item["hasError"] and item["dataAmount"] == 5

    # one vision call per embedded image, none for the linked one: the image as a data URL beside its chunk
    sent = scripted.requests_to("/chat/completions")
    assert sorted(image_url_of(request) or "" for request in sent) == sorted([data_url(CHART), data_url(MAP)])
    assert {request.json["model"] for request in sent} == {"scripted-vision"}
    for request in sent:
        (message,) = request.messages
        text = next(part["text"] for part in message["content"] if part["type"] == "text")
        expected = "explains pay" if image_url_of(request) == data_url(CHART) else "Ferries leave hourly"
        assert expected in text and "<Context>" in text

    rows = rows_of(client, collection_id)
    assert all("base64" not in row["q"] for row in rows)  # the bytes are not in the chunk text
    assert "![pay chart](image:" in rows[2]["q"] and "https://example.invalid/logo.png" in rows[3]["q"]
    typed = {(row["chunkIndex"], index["type"], index["text"]) for row in rows for index in row["indexes"]}
    assert (2, "image", DESCRIPTIONS[data_url(CHART)]) in typed
    assert (3, "image", DESCRIPTIONS[data_url(MAP)]) in typed
    assert [index for index in typed if index[1] == "image" and index[0] not in (2, 3)] == []

    hits = search(client, dataset_id, "lighthouse keeper salaries by decade")
    assert hits[0]["chunkIndex"] == 2 and "explains pay" in hits[0]["q"]
    hits = search(client, dataset_id, "ferry routes between the harbour islands")
    assert hits[0]["chunkIndex"] == 3

    detail = ok(
        client.get("/api/core/dataset/collection/trainingDetail", params={"collectionId": collection_id})
    )
    assert detail["advancedTraining"]["imageIndex"] is True and detail["errorCounts"]["image"] == 0
    summary = ok(client.get("/api/support/usage/summary"))
    (bill,) = [entry for entry in summary["byBill"] if entry["billId"] == bill_id]
    assert bill["outputTokens"] == 2 * USAGE[1] and bill["inputTokens"] > 2 * USAGE[0]


def test_pictures_of_a_word_document_are_described(
    client: httpx.Client, scripted: ScriptedOpenAIServer
) -> None:
    import docx

    document = docx.Document()
    document.add_paragraph("Our garden opens on Sundays.")
    document.add_picture(io.BytesIO(PHOTO))
    buffer = io.BytesIO()
    document.save(buffer)
    dataset_id = new_dataset(client, "Garden")  # no vlmModel: the first model with vision: true
    created = ok(
        client.post(
            "/api/core/dataset/collection/create/localFile",
            files={"file": ("garden.docx", buffer.getvalue(), "application/octet-stream")},
            data={"data": f'{{"datasetId": "{dataset_id}", "imageIndex": true}}'},
        )
    )
    wait_trained(client, dataset_id, created["collectionId"])
    (request,) = scripted.requests_to("/chat/completions")
    assert image_url_of(request) == data_url(PHOTO) and request.json["model"] == "scripted-vision"
    hits = search(client, dataset_id, "red bicycle against a stone wall")
    assert "garden opens on Sundays" in hits[0]["q"]
    assert {"image"} <= {index["type"] for index in hits[0]["indexes"]}


def test_an_uploaded_image_is_a_collection_of_its_description(
    client: httpx.Client, scripted: ScriptedOpenAIServer
) -> None:
    dataset_id = new_dataset(client, "Maps", vlmModel="scripted-vision")
    created = ok(
        client.post(
            "/api/core/dataset/collection/create/localFile",
            files={"file": ("routes.png", MAP, "image/png")},
            data={"data": f'{{"datasetId": "{dataset_id}"}}'},
        )
    )
    collection_id = created["collectionId"]
    item = wait_trained(client, dataset_id, collection_id)
    assert item["type"] == "images" and item["trainingType"] == "imageParse" and item["fileId"]
    (request,) = scripted.requests_to("/chat/completions")
    assert image_url_of(request) == data_url(MAP)
    assert [(row["q"], row["a"]) for row in rows_of(client, collection_id)] == [
        (DESCRIPTIONS[data_url(MAP)], "")
    ]
    assert search(client, dataset_id, "ferry departure piers")[0]["collectionId"] == collection_id
    # rows pushed into an image collection have no image: stored as sent, nothing for the vision model
    pushed = ok(
        client.post(
            "/api/core/dataset/data/pushData",
            json={"collectionId": collection_id, "data": [{"q": "Ferries also stop at the north pier."}]},
        )
    )
    assert pushed["insertLen"] == 1 and len(scripted.requests_to("/chat/completions")) == 1
    assert len(rows_of(client, collection_id)) == 2


def test_a_failed_description_is_kept_then_retried(
    client: httpx.Client, scripted: ScriptedOpenAIServer
) -> None:
    def flaky(request: RecordedRequest) -> Turn:
        if image_url_of(request) == data_url(MAP):
            return Turn(status=400, error="image too blurry for this model")
        return describe(request)

    scripted.set_script(flaky)
    dataset_id = new_dataset(client, "Flaky", vlmModel="scripted-vision")
    collection_id = ok(
        client.post(
            "/api/core/dataset/collection/create/text",
            json={"datasetId": dataset_id, "name": "h", "text": DOCUMENT, "imageIndex": True, **SMALL_CHUNKS},
        )
    )["collectionId"]
    item = wait_trained(client, dataset_id, collection_id)
    assert item["hasError"] and item["trainingErrorCount"] == 1 and item["dataAmount"] == 5
    errors = ok(
        client.post("/api/core/dataset/training/getTrainingError", json={"collectionId": collection_id})
    )
    (failed,) = errors["list"]
    assert failed["mode"] == "image" and failed["chunkIndex"] == 3 and "blurry" in failed["errorMsg"]
    assert failed["q"].startswith("![routes](image:")
    detail = ok(
        client.get("/api/core/dataset/collection/trainingDetail", params={"collectionId": collection_id})
    )
    assert detail["errorCounts"]["image"] == 1

    scripted.set_script(describe)
    ok(
        client.put(
            "/api/core/dataset/training/updateTrainingData",
            json={"datasetId": dataset_id, "collectionId": collection_id},
        )
    )
    item = wait_trained(client, dataset_id, collection_id)
    assert not item["hasError"]
    images = [
        (row["chunkIndex"], index["text"])
        for row in rows_of(client, collection_id)
        for index in row["indexes"]
        if index["type"] == "image"
    ]
    assert sorted(images) == [(2, DESCRIPTIONS[data_url(CHART)]), (3, DESCRIPTIONS[data_url(MAP)])]


def test_refusals_name_the_field_and_the_fix(client: httpx.Client) -> None:
    not_vision = client.post("/api/core/dataset/create", json={"name": "x", "vlmModel": "scripted-chat"})
    assert not_vision.status_code == 400
    assert (
        not_vision.json()["message"].startswith("vlmModel: ")
        and "vision: true" in not_vision.json()["message"]
    )
    unknown = client.post("/api/core/dataset/create", json={"name": "x", "vlmModel": "no-such-model"})
    assert unknown.status_code == 400 and "scripted-vision" in unknown.json()["message"]
    dataset_id = new_dataset(client, "Refusals")
    changed = client.post("/api/core/dataset/update", json={"id": dataset_id, "vlmModel": "scripted-chat"})
    assert changed.status_code == 400 and changed.json()["message"].startswith("vlmModel: ")
    ok(client.post("/api/core/dataset/update", json={"id": dataset_id, "vlmModel": "scripted-vision"}))
    assert ok(client.get("/api/core/dataset/detail", params={"id": dataset_id}))["vlmModel"]["model"] == (
        "scripted-vision"
    )
    with_qa = client.post(
        "/api/core/dataset/collection/create/text",
        json={"datasetId": dataset_id, "name": "x", "text": "t", "trainingType": "qa", "imageIndex": True},
    )
    assert with_qa.status_code == 400 and with_qa.json()["message"].startswith("imageIndex: ")
    link = client.post(
        "/api/core/dataset/collection/create/link",
        json={"datasetId": dataset_id, "link": "https://example.com/page", "imageIndex": True},
    )
    assert link.status_code == 400 and link.json()["message"].startswith("imageIndex: ")
    assert "never fetches" in link.json()["message"]
    virtual = ok(
        client.post(
            "/api/core/dataset/collection/create",
            json={"datasetId": dataset_id, "name": "rows", "type": "virtual"},
        )
    )
    pushed = client.post(
        "/api/core/dataset/data/pushData",
        json={"collectionId": virtual, "imageIndex": True, "data": [{"q": "a row"}]},
    )
    assert pushed.status_code == 400 and pushed.json()["message"].startswith("imageIndex: ")
