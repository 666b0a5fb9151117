"""A ``fathom worker`` process killed with SIGKILL in the middle of QA training (the scripted model writing
question/answer pairs chunk by chunk): after its lease expires, another worker finishes the job, and every
chunk ends with exactly the pairs the model wrote for it, none lost, none twice. On SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import os
import re
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

CHUNKS = 24
PARAGRAPHS = [
    f"Pump P-{i} needs its filter {i} changed every {i + 2} weeks of service." for i in range(CHUNKS)
]
CONTEXT = re.compile(r"<Context>\n(.*?)\n</Context>", re.S)


def pairs_for(chunk: str) -> list[tuple[str, str]]:
    pump = chunk.split()[1]
    return [(f"How often is the filter of {pump} changed?", chunk), (f"What does {pump} need?", "A filter.")]


async def slow_qa(request: RecordedRequest, gate: ModelGate) -> Turn:
    """The pairs of the chunk, after a pause (and, past the gate's first answers, once the gate is open)."""
    await gate.turn()
    await asyncio.sleep(0.15)
    chunk = CONTEXT.findall(request.messages[-1]["content"])[-1].strip()
    return Turn(content="\n".join(f"Q{n}: {q}\nA{n}: {a}" for n, (q, a) in enumerate(pairs_for(chunk), 1)))


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
    gate = ModelGate(answered=4)  # 4 chunks written, then the worker waits on the model: killed there
    with ScriptedOpenAIServer(lambda request: slow_qa(request, gate)) as scripted:
        chat = {"openai_base_url": scripted.base_url, "chat_model": "scripted-chat"}
        settings = worker_settings(tmp_path, database_url, **chat)
        env = worker_env(
            tmp_path,
            database_url,
            FATHOM_OPENAI_BASE_URL=scripted.base_url,
            FATHOM_CHAT_MODEL="scripted-chat",
        )
        upgraded = db_upgrade(env)
        assert upgraded.returncode == 0, upgraded.stdout
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
        with WorkerProcess(env) as worker:
            for status, done, total, _rows, left in worker.poll(lambda: _state(settings, collection_id)):
                if status == "indexing" and done > 0 and left > CHUNKS // 2:
                    break
                assert worker.running(), (status, done, total, left)
        status, _, _, rows_at_kill, left_at_kill = _state(settings, collection_id)
        assert status == "indexing" and rows_at_kill and left_at_kill  # it really died half-way
        asked_before = len(scripted.requests_to("/chat/completions"))

        gate.open()
        finisher = finish_after_lease(env)
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

        # the kill cost no attempt (seen once in CI at load 9: ("done", 2, 1), a run that failed and was
        # queued again; the workers' warnings say which run failed and why)
        logs = f"killed worker: {worker.log()!r}; finisher: {finisher.stderr!r}"
        assert asyncio.run(job_state()) == ("done", 1, 1), logs
