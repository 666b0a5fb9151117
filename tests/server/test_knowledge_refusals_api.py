"""What the knowledge-base services refuse, as FastGPT answers it over HTTP: the status, ``statusText`` and
a message naming the field and the fix (the services raise domain errors; the knowledge routes answer them
in one place)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from live_support import LiveServer, create_text_dataset, free_port, ok, start_live_server

from fathom.config import Settings

KB = "/api/core/dataset"
MISSING_ID = "0" * 24


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    root = tmp_path_factory.mktemp("refusals")
    yield from start_live_server(Settings(data_dir=root / "data", port=free_port(), workers=1))


@pytest.fixture
def client(server: LiveServer) -> Iterator[httpx.Client]:
    with server.client(server.admin_key) as client:
        yield client


def refused(response: httpx.Response, status: int, status_text: str) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["statusText"] == status_text and body["data"] is None, body
    return str(body["message"])


def new_collection(client: httpx.Client, dataset_id: str, name: str, **fields: object) -> str:
    body = {"datasetId": dataset_id, "name": name, "type": "virtual", **fields}
    return str(ok(client.post(f"{KB}/collection/create", json=body)))


def test_rows_for_model_training_without_a_chat_model_are_refused_naming_the_training_type(
    client: httpx.Client,
) -> None:
    dataset_id = str(ok(client.post(f"{KB}/create", json={"name": "No model"})))
    collection_id = new_collection(client, dataset_id, "manual")
    body = {"collectionId": collection_id, "trainingType": "qa", "data": [{"q": "What?", "a": "This."}]}
    message = refused(client.post(f"{KB}/data/pushData", json=body), 400, "invalidParams")
    assert message.startswith('trainingType "qa": training with a model needs a chat model'), message


def test_an_unknown_training_bill_is_refused_naming_bill_id(client: httpx.Client) -> None:
    dataset_id = str(ok(client.post(f"{KB}/create", json={"name": "Billed"})))
    collection_id = new_collection(client, dataset_id, "manual")
    body = {"collectionId": collection_id, "billId": MISSING_ID, "data": [{"q": "What?"}]}
    message = refused(client.post(f"{KB}/data/pushData", json=body), 400, "invalidParams")
    assert message.startswith(f"billId: no training bill has the id '{MISSING_ID}'"), message
    assert "createTrainingUsage" in message


def test_a_folder_takes_no_embedding_model(client: httpx.Client) -> None:
    folder_id = str(ok(client.post(f"{KB}/create", json={"name": "Folder", "type": "folder"})))
    body = {"id": folder_id, "vectorModel": "text-embedding-3-small"}
    message = refused(client.post(f"{KB}/update", json=body), 400, "invalidParams")
    assert message.startswith("vectorModel: a folder has no embedding model"), message


def test_a_collection_folder_cannot_move_into_its_own_subfolder(client: httpx.Client) -> None:
    dataset_id = str(ok(client.post(f"{KB}/create", json={"name": "Tree"})))
    outer = new_collection(client, dataset_id, "outer", type="folder")
    inner = new_collection(client, dataset_id, "inner", type="folder", parentId=outer)
    response = client.post(f"{KB}/collection/update", json={"id": outer, "parentId": inner})
    message = refused(response, 400, "invalidParams")
    assert message == "parentId: a folder cannot move into itself or its subfolders"
    folders = ok(client.post(f"{KB}/collection/listV2", json={"datasetId": dataset_id}))["list"]
    assert next(item for item in folders if item["_id"] == outer)["parentId"] is None  # nothing moved


def test_search_with_an_extension_model_this_server_lacks_is_refused(client: httpx.Client) -> None:
    dataset_id = create_text_dataset(client, name="Searched")
    body = {
        "datasetId": dataset_id,
        "text": "refunds",
        "datasetSearchUsingExtensionQuery": True,
        "datasetSearchExtensionModel": "no-such-model",
    }
    message = refused(client.post(f"{KB}/searchTest", json=body), 400, "invalidParams")
    assert message.startswith("datasetSearchExtensionModel: "), message


def test_retrying_training_data_that_does_not_exist_answers_not_found(client: httpx.Client) -> None:
    response = client.post(f"{KB}/training/updateTrainingData", json={"dataId": MISSING_ID})
    assert response.status_code == 404, response.text
    assert response.json()["data"] is None
