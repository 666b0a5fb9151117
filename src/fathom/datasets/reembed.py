"""Changing a knowledge base's embedding model: every index text embedded again, as a durable job.

``change_model`` checks the new model and queues a ``dataset.reembed`` job. The job embeds the index texts
chunk batch by chunk batch and stages the new vectors beside the old ones (each batch one transaction);
searches keep using the old model and its vectors until every chunk has new ones, when one transaction
switches the dataset's model and drops the old vectors. A retried job skips the chunks already staged.
Chunks added or edited meanwhile are picked up before the switch. A newer request for the same dataset
supersedes an older job still running.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from fathom.datasets.embedders import EmbedderResolver
from fathom.store.knowledge import IndexToReembed, SqlDatasetRepository, SqlReembedRepository
from fathom.store.protocols import JobQueue, JobRecord

REEMBED_JOB_KIND = "dataset.reembed"
REEMBED_BATCH_CHUNKS = 32
MAX_SWITCH_ROUNDS = 5

log = logging.getLogger("fathom.reembed")


@dataclass(frozen=True)
class ModelChange:
    """What ``change_model`` did: ``job`` is None when nothing had to be re-embedded."""

    dataset_id: str
    vector_model: str
    job: JobRecord | None


class ReembedService:
    def __init__(
        self,
        datasets: SqlDatasetRepository,
        reembed: SqlReembedRepository,
        jobs: JobQueue,
        embedders: EmbedderResolver,
        *,
        batch_chunks: int = REEMBED_BATCH_CHUNKS,
        max_attempts: int = 3,
    ) -> None:
        self.datasets = datasets
        self.reembed = reembed
        self.jobs = jobs
        self.embedders = embedders
        self.batch_chunks = batch_chunks
        self.max_attempts = max_attempts

    async def change_model(self, team_id: str, dataset_id: str, vector_model: str) -> ModelChange:
        """Queue the re-embedding of a dataset with ``vector_model`` (an unknown model raises
        ``UnknownEmbeddingModel``). The same model (with no other switch pending) queues nothing, and
        neither does a dataset without collections: its model is switched at once."""
        dataset = await self.datasets.get_dataset(team_id, dataset_id)
        self.embedders.get(vector_model)
        pending = await self.pending_model(dataset_id)
        if vector_model == dataset.vector_model and pending is None:
            return ModelChange(dataset_id, vector_model, None)
        # a dataset without collections has nothing to re-embed: switched at once, so an import right
        # after uses the new model (one with an import queued goes through the job, after that import)
        if pending is None and await self.datasets.switch_empty_model(
            dataset_id, dataset.vector_model, vector_model
        ):
            return ModelChange(dataset_id, vector_model, None)
        job = await self.jobs.enqueue(
            REEMBED_JOB_KIND,
            {"datasetId": dataset_id, "vectorModel": vector_model},
            team_id=team_id,
            max_attempts=self.max_attempts,
            lane=dataset_id,
        )
        return ModelChange(dataset_id, vector_model, job)

    async def _active_jobs(self, dataset_id: str) -> list[JobRecord]:
        jobs = [
            job
            for status in ("queued", "running")
            for job in await self.jobs.list_jobs(status=status, kind=REEMBED_JOB_KIND)
            if job.payload.get("datasetId") == dataset_id
        ]
        return sorted(jobs, key=lambda job: (job.created_at, job.id))

    async def pending_model(self, dataset_id: str) -> str | None:
        """The model a queued or running re-embed of this dataset is switching to, if any."""
        jobs = await self._active_jobs(dataset_id)
        return str(jobs[-1].payload["vectorModel"]) if jobs else None

    async def rebuilding_count(self, dataset_id: str) -> int:
        """Index rows still to embed with the model a queued or running switch moves to (FastGPT's
        ``rebuildingCount``); 0 when no switch is pending."""
        pending = await self.pending_model(dataset_id)
        return 0 if pending is None else await self.reembed.count_unstaged(dataset_id, pending)

    async def _superseded(self, job: JobRecord) -> bool:
        jobs = await self._active_jobs(str(job.payload["datasetId"]))
        return (
            bool(jobs)
            and jobs[-1].id != job.id
            and (jobs[-1].created_at, jobs[-1].id)
            > (
                job.created_at,
                job.id,
            )
        )

    async def run(self, job: JobRecord) -> dict[str, Any]:
        """The job handler: stage new vectors batch by batch, then switch the dataset's model."""
        dataset_id = str(job.payload["datasetId"])
        target = str(job.payload["vectorModel"])
        dataset = await self.datasets.get_dataset(str(job.team_id), dataset_id)
        if dataset.vector_model == target:
            await self.reembed.drop_other_models(dataset_id, {target})
            return {"vectorModel": target, "reembedded": 0, "switched": False}
        source = dataset.vector_model
        embedder = self.embedders.get(target)
        await self.reembed.drop_other_models(dataset_id, {source, target})
        embedded = 0
        for _ in range(MAX_SWITCH_ROUNDS):
            while True:
                if await self._superseded(job):
                    return {"vectorModel": target, "reembedded": embedded, "superseded": True}
                batch = await self.reembed.next_batch(dataset_id, source, target, self.batch_chunks)
                if not batch:
                    break
                indexes: list[IndexToReembed] = [index for group in batch.values() for index in group]
                vectors = await embedder.embed([index.text for index in indexes])
                await self.reembed.stage(dataset_id, list(zip(indexes, vectors, strict=True)), target)
                embedded += len(indexes)
            if await self.reembed.switch(dataset_id, source, target):
                log.info("dataset %s now uses %s (%d index texts embedded)", dataset_id, target, embedded)
                return {"vectorModel": target, "reembedded": embedded, "switched": True}
            current = (await self.datasets.get_dataset(str(job.team_id), dataset_id)).vector_model
            if current != source:  # another job switched it meanwhile
                return {"vectorModel": current, "reembedded": embedded, "switched": False}
        raise RuntimeError(
            f"dataset {dataset_id}: chunks kept changing during the switch to {target}; the job will retry"
        )
