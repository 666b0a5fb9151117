"""A client generated from ``/openapi.json`` (openapi-python-client, a dev extra) runs the README's
five-minute tour: health, a knowledge base with a text import, its listing until the text is ready, a
search test, a simple app on the scripted model, publishing it, and a chat. Nothing here is written by
hand against the API: each call is a generated function with its generated body model, so a route
whose document is wrong or incomplete fails the tour."""

from __future__ import annotations

import importlib
import json
import shutil
import subprocess
import sys
import time
import typing
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
from chat_support import MODEL, ChatServer, free_port, start_chat_server

from fathom.config import Settings
from fathom.testing import ScriptedOpenAIServer, text_turn

GENERATOR = shutil.which("openapi-python-client", path=str(Path(sys.executable).parent))
pytestmark = pytest.mark.skipif(
    GENERATOR is None, reason="openapi-python-client is not installed (pip install -e .[dev])"
)
PACKAGE = "fathom_tour_client"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, scripted: ScriptedOpenAIServer) -> Iterator[ChatServer]:
    root = tmp_path_factory.mktemp("tour")
    settings = Settings(
        data_dir=root / "data",
        port=free_port(),
        workers=1,
        openai_base_url=scripted.base_url,
        chat_model=MODEL,
    )
    yield from start_chat_server(settings, scripted, run_workers=True)


@pytest.fixture(scope="module")
def generated(server: ChatServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    """The client package generated from the live server's document, importable."""
    root = tmp_path_factory.mktemp("client")
    # generous: the first /openapi.json builds the whole document (seconds of CPU on a busy machine)
    document = httpx.get(f"{server.base_url}/openapi.json", timeout=60).json()
    (root / "openapi.json").write_text(json.dumps(document))
    (root / "config.json").write_text(json.dumps({"package_name_override": PACKAGE, "post_hooks": []}))
    assert GENERATOR is not None
    result = subprocess.run(
        [GENERATOR, "generate", "--path", "openapi.json", "--config", "config.json"]
        + ["--output-path", str(root / PACKAGE), "--meta", "none"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    # a piece the generator could not build (an operation it skipped) is a hole in the document
    assert "Unable to" not in result.stdout + result.stderr, result.stdout + result.stderr
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(root))
        for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
            del sys.modules[name]


def _endpoint(package: ModuleType, path: str, method: str = "post") -> Any:
    """The generated module that calls ``method path`` (found by the URL it requests)."""
    root = Path(package.__file__ or "").parent / "api"
    for source in sorted(root.glob("*/*.py")):
        text = source.read_text()
        if f'"url": "{path}",' in text and f'"method": "{method}",' in text:
            tag = source.parent.name
            return importlib.import_module(f"{package.__name__}.api.{tag}.{source.stem}")
    raise AssertionError(f"the generated client has no {method.upper()} {path}")


def body_model(module: Any, path: str) -> Any:
    """The generated model of the operation's JSON body (an optional body is typed ``Model | Unset``)."""
    hints = typing.get_type_hints(module.sync_detailed)
    assert "body" in hints, f"the document declares no request body for POST {path}"
    models = [t for t in typing.get_args(hints["body"]) or (hints["body"],) if hasattr(t, "from_dict")]
    assert len(models) == 1, f"POST {path}: body typed {hints['body']}"
    return models[0]


def call(package: ModuleType, client: Any, path: str, body: dict[str, Any] | None = None) -> Any:
    """POST ``body`` through the generated function of ``path`` with its generated body model; the
    answer is parsed by the generated response model, and its ``data`` returned as plain JSON."""
    module = _endpoint(package, path)
    kwargs: dict[str, Any] = {"client": client}
    if body is not None:
        kwargs["body"] = body_model(module, path).from_dict(body)
    response = module.sync_detailed(**kwargs)
    assert response.status_code == 200, response.content
    assert response.parsed is not None, f"{path}: the answer does not parse as its documented model"
    envelope = response.parsed.to_dict()
    assert envelope["code"] == 200, envelope
    return envelope["data"]


def test_the_readme_tour_runs_on_a_client_generated_from_the_document(
    server: ChatServer, generated: ModuleType, scripted: ScriptedOpenAIServer
) -> None:
    client_type = generated.AuthenticatedClient
    client = client_type(
        base_url=server.base_url,
        token=server.admin_key,
        raise_on_unexpected_status=True,
        timeout=httpx.Timeout(60.0),  # a loaded CI machine; the generated client's default is 5 s
    )
    with client:
        health = _endpoint(generated, "/api/health", "get").sync_detailed(client=client)
        assert health.status_code == 200

        dataset = call(generated, client, "/api/core/dataset/create", {"name": "Handbook"})
        text = "Refunds are paid to the original card within five working days."
        imported = call(
            generated,
            client,
            "/api/core/dataset/collection/create/text",
            {"datasetId": dataset, "name": "refunds", "text": text},
        )
        assert imported["collectionId"]
        deadline = time.monotonic() + 120
        while True:
            listing = call(generated, client, "/api/core/dataset/collection/listV2", {"datasetId": dataset})
            if listing["list"] and listing["list"][0]["status"] == "ready":
                break
            assert time.monotonic() < deadline, listing
            time.sleep(0.5)
        found = call(
            generated,
            client,
            "/api/core/dataset/searchTest",
            {"datasetId": dataset, "text": "when do I get my money back", "searchMode": "mixedRecall"},
        )
        assert "Refunds" in found["list"][0]["q"]

        simple_config = {
            "model": MODEL,
            "systemPrompt": "Answer from the handbook.",
            "datasets": [{"datasetId": dataset}],
        }
        app = call(
            generated,
            client,
            "/api/core/app/create",
            {"name": "Helpdesk", "type": "simple", "simpleConfig": simple_config},
        )
        call(generated, client, "/api/core/app/version/publish", {"appId": app})

        scripted.set_script([text_turn("Within five working days, to the original card.")])
        chat = _endpoint(generated, "/api/v1/chat/completions")
        question = {"role": "user", "content": "When do refunds arrive?"}
        chat_body = {"appId": app, "chatId": "demo-1", "messages": [question]}
        reply = chat.sync_detailed(
            client=client, body=body_model(chat, "/api/v1/chat/completions").from_dict(chat_body)
        )
    assert reply.status_code == 200, reply.content
    answer = json.loads(reply.content)
    assert answer["choices"][0]["message"]["content"] == "Within five working days, to the original card."
    sent = scripted.chat_requests[-1]["messages"]
    assert "Refunds are paid to the original card" in json.dumps(sent)  # the search reached the model
