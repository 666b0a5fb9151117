"""A ``fathom worker`` process killed with SIGKILL in the middle of an ingestion: after its lease expires,
another worker finishes the job, and the collection ends with every chunk exactly once."""

from __future__ import annotations

import asyncio
from pathlib import Path

from killed_worker_support import WorkerProcess, db_upgrade, finish_after_lease, worker_env, worker_settings

from fathom.llm.local_embedding import LOCAL_EMBEDDING_MODEL_ID
from fathom.platform import Platform


def _state(tmp_path: Path, collection_id: str) -> tuple[str, int, int, list[int]]:
    platform = Platform.build(worker_settings(tmp_path))

    async def read() -> tuple[str, int, int, list[int]]:
        try:
            collection = await platform.datasets.get_collection(None, collection_id)
            rows, _ = await platform.chunks.list_chunks(collection.team_id, collection_id, limit=10_000)
            return (
                collection.status,
                collection.chunks_done,
                collection.chunks_total,
                [r.chunk_index for r in rows],
            )
        finally:
            await platform.db.close()

    return asyncio.run(read())


def test_killed_worker_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    env = worker_env(tmp_path)
    assert db_upgrade(env).returncode == 0
    text = "\n\n".join(
        f"Paragraph {i} describes part {i} of the maintenance manual for pump model P-{i % 17}."
        for i in range(600)
    )
    platform = Platform.build(worker_settings(tmp_path))

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
                raw_text=text,
                chunk_settings={"chunkSize": 120},
            )
            job = await platform.ingestion.enqueue(collection)
            return collection.id, job.id
        finally:
            await platform.db.close()

    collection_id, job_id = asyncio.run(setup())
    with WorkerProcess(env) as worker:
        for status, done, total, _ in worker.poll(lambda: _state(tmp_path, collection_id)):
            if status == "indexing" and 0 < done < total:
                break
            assert worker.running(), (status, done, total)
    status, done_at_kill, total, _ = _state(tmp_path, collection_id)
    assert status == "indexing" and done_at_kill < total  # it really died half-way

    finisher = finish_after_lease(env)
    assert finisher.returncode == 0, finisher.stderr
    status, done, total, indexes = _state(tmp_path, collection_id)
    assert status == "ready" and done == total
    assert sorted(indexes) == list(range(total))  # nothing lost, nothing twice

    async def job_state() -> tuple[str, int, int, object]:
        try:
            job = await platform.jobs.get(job_id)
            return job.status, job.attempts, job.lease_expiries, job.result
        finally:
            await platform.db.close()

    job_status, attempts, lease_expiries, result = asyncio.run(job_state())
    assert job_status == "done" and attempts == 1 and lease_expiries == 1  # the kill cost no attempt
    assert isinstance(result, dict) and result["skipped"] >= done_at_kill > 0
