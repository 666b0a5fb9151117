"""A ``fathom worker`` process killed with SIGKILL in the middle of QA training (the scripted model writing
question/answer pairs chunk by chunk): after its lease expires, another worker finishes the job, and every
chunk ends with exactly the pairs the model wrote for it, none lost, none twice. On SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fathom.config import Settings
from fathom.llm.local_embedding import LOCAL_EMBEDDING_MODEL_ID
from fathom.platform import Platform
from fathom.testing import ScriptedOpenAIServer, Turn
from fathom.testing.scripted_openai import RecordedRequest

LEASE_SECONDS = 2
CHUNKS = 24
PARAGRAPHS = [
    f"Pump P-{i} needs its filter {i} changed every {i + 2} weeks of service." for i in range(CHUNKS)
]
CONTEXT = re.compile(r"<Context>\n(.*?)\n</Context>", re.S)


def pairs_for(chunk: str) -> list[tuple[str, str]]:
    pump = chunk.split()[1]
    return [(f"How often is the filter of {pump} changed?", chunk), (f"What does {pump} need?", "A filter.")]


async def slow_qa(request: RecordedRequest) -> Turn:
    """The pairs of the chunk, after a pause long enough to kill the worker between two chunks."""
    await asyncio.sleep(0.15)
    chunk = CONTEXT.findall(request.messages[-1]["content"])[-1].strip()
    return Turn(content="\n".join(f"Q{n}: {q}\nA{n}: {a}" for n, (q, a) in enumerate(pairs_for(chunk), 1)))


def _settings(tmp_path: Path, base_url: str, database_url: str | None) -> Settings:
    return Settings(
        data_dir=tmp_path / "data",
        database_url=database_url,
        job_lease_seconds=LEASE_SECONDS,
        openai_base_url=base_url,
        chat_model="scripted-chat",
    )


def _env(tmp_path: Path, base_url: str, database_url: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FATHOM_")}
    if database_url:
        env["FATHOM_DATABASE_URL"] = database_url
    env.update(
        {
            "FATHOM_DATA_DIR": str(tmp_path / "data"),
            "FATHOM_LOG_LEVEL": "warning",
            "FATHOM_JOB_LEASE_SECONDS": str(LEASE_SECONDS),
            "FATHOM_OPENAI_BASE_URL": base_url,
            "FATHOM_CHAT_MODEL": "scripted-chat",
        }
    )
    return env


def _state(settings: Settings, collection_id: str) -> tuple[str, int, int, list[tuple[int, str, str]], int]:
    """Status, chunks done and total, the rows (chunk index, q, a), and the training items left."""
    platform = Platform.build(settings)

    async def read() -> tuple[str, int, int, list[tuple[int, str, str]], int]:
        try:
            collection = await platform.datasets.get_collection(None, collection_id)
            rows, _ = await platform.chunks.list_chunks(collection.team_id, collection_id, limit=10_000)
            left = await platform.training.item_positions(collection_id)
            return (
                collection.status,
                collection.chunks_done,
                collection.chunks_total,
                sorted((r.chunk_index, r.q, r.a) for r in rows),
                len(left),
            )
        finally:
            await platform.db.close()

    return asyncio.run(read())


def test_killed_qa_worker_loses_and_duplicates_no_pair(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    database_url = None
    if backend == "postgres":
        database_url = request.getfixturevalue("postgres_server").create_database(f"killed_qa_{os.getpid()}")
    with ScriptedOpenAIServer(slow_qa) as scripted:
        settings = _settings(tmp_path, scripted.base_url, database_url)
        env = _env(tmp_path, scripted.base_url, database_url)
        upgraded = subprocess.run(
            [sys.executable, "-m", "fathom", "db", "upgrade"], env=env, capture_output=True
        )
        assert upgraded.returncode == 0, upgraded.stderr
        platform = Platform.build(settings)

        async def setup() -> tuple[str, str]:
            try:
                boot = await platform.prepare()
                dataset = await platform.datasets.create_dataset(
                    boot.team_id, "KB", vector_model=LOCAL_EMBEDDING_MODEL_ID
                )
                collection = await platform.datasets.create_collection(
                    boot.team_id,
                    dataset.id,
                    "manual",
                    type="virtual",
                    raw_text="\n\n".join(PARAGRAPHS),
                    training_type="qa",
                    chunk_settings={
                        "chunkSettingMode": "custom",
                        "chunkSplitMode": "char",
                        "chunkSplitter": "\n\n",
                    },
                )
                job = await platform.ingestion.enqueue(collection)
                return collection.id, job.id
            finally:
                await platform.db.close()

        collection_id, job_id = asyncio.run(setup())
        worker = subprocess.Popen(
            [sys.executable, "-m", "fathom", "worker"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 120
        try:
            while True:
                status, done, total, rows, left = _state(settings, collection_id)
                if status == "indexing" and done > 0 and left > CHUNKS // 2:
                    break
                assert worker.poll() is None and time.monotonic() < deadline, (status, done, total, left)
                time.sleep(0.05)
        finally:
            worker.send_signal(signal.SIGKILL)
            worker.wait(timeout=10)
        status, _, _, rows_at_kill, left_at_kill = _state(settings, collection_id)
        assert status == "indexing" and rows_at_kill and left_at_kill  # it really died half-way
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
        status, done, total, rows, left = _state(settings, collection_id)
        expected = sorted((i, q, a) for i, chunk in enumerate(PARAGRAPHS) for q, a in pairs_for(chunk))
        assert status == "ready" and left == 0
        assert rows == expected  # every pair once: nothing lost, nothing twice
        assert done == total == len(expected)
        # the finisher asked the model only for the chunks not written before the kill
        chunks_written_at_kill = len({index for index, _, _ in rows_at_kill})
        asked_after = len(scripted.requests_to("/chat/completions")) - asked_before
        assert asked_after == CHUNKS - chunks_written_at_kill

        async def job_state() -> tuple[str, int, int]:
            try:
                job = await platform.jobs.get(job_id)
                return job.status, job.attempts, job.lease_expiries
            finally:
                await platform.db.close()

        assert asyncio.run(job_state()) == ("done", 1, 1)  # the kill cost no attempt
