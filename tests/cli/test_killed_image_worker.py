"""A ``fathom worker`` process killed with SIGKILL while the vision model describes the images of an import
(``imageIndex``): after its lease expires, another worker finishes the job, and every chunk ends with
exactly one ``image`` index, the description of its own image: none lost, none twice, and the model is
asked again only for the images not described before the kill. On SQLite and PostgreSQL. The process
scaffolding is the killed-QA-worker test's."""

from __future__ import annotations

import asyncio
import base64
import os
import signal
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest
from test_killed_qa_worker import LEASE_SECONDS, _env, _settings

from fathom.config import Settings
from fathom.llm.local_embedding import LOCAL_EMBEDDING_MODEL_ID
from fathom.platform import Platform
from fathom.testing import ScriptedOpenAIServer, Turn
from fathom.testing.scripted_openai import RecordedRequest

IMAGES = 16


def png(shade: int) -> bytes:
    """A valid 1x1 grey PNG (distinct shades: distinct images)."""

    def part(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    pixels = zlib.compress(b"\x00" + bytes((shade,)))
    return b"\x89PNG\r\n\x1a\n" + part(b"IHDR", header) + part(b"IDAT", pixels) + part(b"IEND", b"")


URLS = ["data:image/png;base64," + base64.b64encode(png(10 + i)).decode() for i in range(IMAGES)]
TEXT = "\n\n".join(f"Pump P-{i} is wired as drawn. ![wiring]({url})" for i, url in enumerate(URLS))


def description(url: str) -> str:
    return f"Wiring diagram {URLS.index(url)} with a fuse and a relay."


async def slow_vision(request: RecordedRequest) -> Turn:
    """The image's description, after a pause long enough to kill the worker between two images."""
    await asyncio.sleep(0.15)
    (part,) = [p for p in request.messages[-1]["content"] if p["type"] == "image_url"]
    return Turn(content=description(part["image_url"]["url"]))


def _images_state(settings: Settings, collection_id: str) -> tuple[str, dict[int, list[str]], int]:
    """Status, the image index texts of each chunk, and the training items left."""
    platform = Platform.build(settings)

    async def read() -> tuple[str, dict[int, list[str]], int]:
        try:
            collection = await platform.datasets.get_collection(None, collection_id)
            rows, _ = await platform.chunks.list_chunks(collection.team_id, collection_id, limit=10_000)
            left = await platform.training.pending(collection_id)
            texts = {
                row.chunk_index: [i["text"] for i in row.indexes if i["type"] == "image"] for row in rows
            }
            return collection.status, texts, len(left)
        finally:
            await platform.db.close()

    return asyncio.run(read())


def test_killed_worker_describes_every_image_once(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    database_url = None
    if backend == "postgres":
        database_url = request.getfixturevalue("postgres_server").create_database(f"killed_img_{os.getpid()}")
    with ScriptedOpenAIServer(slow_vision) as scripted:
        models = tmp_path / "models.yaml"
        models.write_text(
            "models:\n"
            f"  - {{id: scripted-vision, type: llm, vision: true, base_url: '{scripted.base_url}'}}\n",
            encoding="utf-8",
        )
        settings = _settings(tmp_path, scripted.base_url, database_url).model_copy(
            update={"models_file": models}
        )
        env = {**_env(tmp_path, scripted.base_url, database_url), "FATHOM_MODELS_FILE": str(models)}
        upgraded = subprocess.run(
            [sys.executable, "-m", "fathom", "db", "upgrade"], env=env, capture_output=True
        )
        assert upgraded.returncode == 0, upgraded.stderr
        platform = Platform.build(settings)

        async def setup() -> str:
            try:
                boot = await platform.prepare()
                dataset = await platform.datasets.create_dataset(
                    boot.team_id, "KB", vector_model=LOCAL_EMBEDDING_MODEL_ID, vlm_model="scripted-vision"
                )
                collection = await platform.datasets.create_collection(
                    boot.team_id,
                    dataset.id,
                    "wiring",
                    type="virtual",
                    raw_text=TEXT,
                    chunk_settings={
                        "chunkSettingMode": "custom",
                        "chunkSplitMode": "char",
                        "chunkSplitter": "\n\n",
                        "imageIndex": True,
                    },
                )
                await platform.ingestion.enqueue(collection)
                return collection.id
            finally:
                await platform.db.close()

        collection_id = asyncio.run(setup())
        worker = subprocess.Popen(
            [sys.executable, "-m", "fathom", "worker"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 120
        try:
            while True:
                status, texts, left = _images_state(settings, collection_id)
                described = sum(1 for found in texts.values() if found)
                if status == "indexing" and described > 0 and left > IMAGES // 2:
                    break
                assert worker.poll() is None and time.monotonic() < deadline, (status, described, left)
                time.sleep(0.05)
        finally:
            worker.send_signal(signal.SIGKILL)
            worker.wait(timeout=10)
        status, texts_at_kill, left_at_kill = _images_state(settings, collection_id)
        assert status == "indexing" and left_at_kill  # it really died half-way
        described_at_kill = sum(1 for found in texts_at_kill.values() if found)
        asked_before = len(scripted.requests_to("/chat/completions"))

        time.sleep(LEASE_SECONDS + 0.5)  # the dead worker's lease runs out
        finisher = subprocess.run(
            [sys.executable, "-m", "fathom", "worker", "--once"],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert finisher.returncode == 0, finisher.stderr
        status, texts, left = _images_state(settings, collection_id)
        assert status == "ready" and left == 0
        assert texts == {i: [description(url)] for i, url in enumerate(URLS)}  # each once, its own
        asked_after = len(scripted.requests_to("/chat/completions")) - asked_before
        assert asked_after == IMAGES - described_at_kill
        assert "lost the database" not in finisher.stderr  # no write deadlocked with another
