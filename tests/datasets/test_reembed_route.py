"""``POST /api/core/dataset/update`` on a live loopback server with an in-process worker (SQLite)."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from fathom.config import Settings
from fathom.platform import Platform
from fathom.server.app import create_app
from fathom.testing import ScriptedOpenAIServer

TEXT = "\n\n".join(
    [
        "Refunds reach the original card within five working days.",
        "Every device carries a two year warranty against faults.",
        "Parcels ship from Rotterdam and arrive within three days.",
    ]
)


@pytest.fixture
def live(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """(base URL, admin key) of a server whose models file has two embedding models."""
    with ScriptedOpenAIServer(models=("emb-a", "emb-b")) as embeddings:
        models = tmp_path / "models.json"
        models.write_text(
            json.dumps(
                {
                    "models": [
                        {"id": name, "type": "embedding", "base_url": embeddings.base_url, "dimensions": dims}
                        for name, dims in (("emb-a", 32), ("emb-b", 48))
                    ]
                }
            )
        )
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        settings = Settings(data_dir=tmp_path / "data", port=port, workers=1, models_file=models)
        platform = Platform.build(settings)

        async def prepare() -> str | None:
            try:
                return (await platform.prepare()).admin_key
            finally:
                await platform.db.close()

        key = asyncio.run(prepare())
        assert key is not None
        server = uvicorn.Server(
            uvicorn.Config(
                create_app(platform), host="127.0.0.1", port=port, log_level="warning", log_config=None
            )
        )
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 20
        while not server.started:
            assert time.monotonic() < deadline and thread.is_alive(), "server did not start"
            time.sleep(0.02)
        try:
            yield f"http://127.0.0.1:{port}", key
        finally:
            server.should_exit = True
            thread.join(timeout=10)


def test_dataset_update_renames_and_reembeds_through_the_worker(live: tuple[str, str]) -> None:
    base_url, key = live
    with httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {key}"}, timeout=20) as client:

        def call(path: str, body: dict[str, Any]) -> Any:
            response = client.post(path, json=body)
            assert response.status_code == 200, response.text
            return response.json()["data"]

        dataset_id = call("/api/core/dataset/create", {"name": "KB", "vectorModel": "emb-a"})
        call(
            "/api/core/dataset/collection/create/text", {"datasetId": dataset_id, "name": "faq", "text": TEXT}
        )
        bad = client.post("/api/core/dataset/update", json={"id": dataset_id, "vectorModel": "nope"})
        assert bad.status_code == 400 and "System not embedding model: nope" in bad.text
        assert (
            call("/api/core/dataset/update", {"id": dataset_id, "name": "Renamed", "vectorModel": "emb-b"})
            is None
        )
        deadline = time.monotonic() + 60
        while (detail := call("/api/core/dataset/detail", {"id": dataset_id}))["vectorModel"][
            "model"
        ] != "emb-b":
            assert time.monotonic() < deadline, detail
            time.sleep(0.2)
        assert detail["name"] == "Renamed"
        found = call(
            "/api/core/dataset/searchTest",
            {"datasetId": dataset_id, "text": "two year warranty", "searchMode": "embedding"},
        )
        assert "warranty" in found["list"][0]["q"]
