"""A ``fathom worker`` process killed with SIGKILL while the vision model describes the images of an import
(``imageIndex``): after its lease expires, another worker finishes the job, and every chunk ends with
exactly one ``image`` index, the description of its own image: none lost, none twice, and the model is
asked again only for the images not described before the kill. On SQLite and PostgreSQL. The process
scaffolding is the killed-worker tests' (``killed_worker_support``)."""

from __future__ import annotations

import asyncio
import base64
import os
import struct
import zlib
from pathlib import Path

import pytest
from killed_worker_support import (
    ModelGate,
    WorkerProcess,
    db_upgrade,
    finish_after_lease,
    worker_env,
    worker_settings,
)

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


async def slow_vision(request: RecordedRequest, gate: ModelGate) -> Turn:
    """The image's description, after a pause (and, past the gate's first answers, once it is open)."""
    await gate.turn()
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
    gate = ModelGate(answered=4)  # 4 images described, then the worker waits on the model: killed there
    with ScriptedOpenAIServer(lambda request: slow_vision(request, gate)) as scripted:
        models = tmp_path / "models.yaml"
        models.write_text(
            "models:\n"
            f"  - {{id: scripted-vision, type: llm, vision: true, base_url: '{scripted.base_url}'}}\n",
            encoding="utf-8",
        )
        chat = {"openai_base_url": scripted.base_url, "chat_model": "scripted-chat", "models_file": models}
        settings = worker_settings(tmp_path, database_url, **chat)
        env = worker_env(
            tmp_path,
            database_url,
            FATHOM_OPENAI_BASE_URL=scripted.base_url,
            FATHOM_CHAT_MODEL="scripted-chat",
            FATHOM_MODELS_FILE=str(models),
        )
        upgraded = db_upgrade(env)
        assert upgraded.returncode == 0, upgraded.stdout
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
        with WorkerProcess(env) as worker:
            for status, texts, left in worker.poll(lambda: _images_state(settings, collection_id)):
                described = sum(1 for found in texts.values() if found)
                if status == "indexing" and described > 0 and left > IMAGES // 2:
                    break
                assert worker.running(), (status, described, left)
        status, texts_at_kill, left_at_kill = _images_state(settings, collection_id)
        assert status == "indexing" and left_at_kill  # it really died half-way
        described_at_kill = sum(1 for found in texts_at_kill.values() if found)
        asked_before = len(scripted.requests_to("/chat/completions"))

        gate.open()
        finisher = finish_after_lease(env)
        assert finisher.returncode == 0, finisher.stderr
        status, texts, left = _images_state(settings, collection_id)
        assert status == "ready" and left == 0
        assert texts == {i: [description(url)] for i, url in enumerate(URLS)}  # each once, its own
        asked_after = len(scripted.requests_to("/chat/completions")) - asked_before
        assert asked_after == IMAGES - described_at_kill
        assert "lost the database" not in finisher.stderr  # no write deadlocked with another
