"""Changing a knowledge base's embedding model re-embeds it as a durable job, on both backends.

Two OpenAI-compatible embedding models served by one scripted server on loopback: ``emb-a`` (32
dimensions) and ``emb-b`` (48), so a vector of the wrong model cannot pass unnoticed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from fathom.config import Settings
from fathom.datasets import REEMBED_JOB_KIND, EmbedderResolver, ReembedService
from fathom.datasets.embedders import UnknownEmbeddingModel
from fathom.datasets.ingest import PushIndex, PushRow
from fathom.llm import ModelRegistry
from fathom.llm.model_config import ModelConfig
from fathom.platform import Bootstrap, Platform
from fathom.store.db import Database
from fathom.store.knowledge import SqlReembedRepository
from fathom.store.models import DataIndex
from fathom.testing import ScriptedOpenAIServer

ROWS = [
    PushRow(
        "Refunds reach the original card within five working days.", indexes=(PushIndex("money back timing"),)
    ),
    PushRow("Parcels ship from Rotterdam and arrive within three days."),
    PushRow("Every device carries a two year warranty against faults.", "Warranty answer."),
    PushRow("Support answers email within one business day."),
    PushRow("Gift cards never expire and can be split across orders."),
]


@pytest.fixture(scope="module")
def embedding_server() -> Iterator[ScriptedOpenAIServer]:
    server = ScriptedOpenAIServer(models=("emb-a", "emb-b"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
async def kb(
    database: Database, tmp_path: Path, embedding_server: ScriptedOpenAIServer
) -> AsyncIterator[tuple[Platform, Bootstrap]]:
    settings = Settings(data_dir=tmp_path / "data", workers=0)
    settings.ensure_data_dir()
    registry = ModelRegistry(
        [
            ModelConfig(id="emb-a", type="embedding", base_url=embedding_server.base_url, dimensions=32),
            ModelConfig(id="emb-b", type="embedding", base_url=embedding_server.base_url, dimensions=48),
        ]
    )
    built = Platform(settings=settings, db=database, secret_key="k" * 32, models=registry)
    boot = await built.bootstrap()
    yield built, boot


async def _dataset_with_rows(platform: Platform, team_id: str) -> tuple[str, str]:
    dataset = await platform.datasets.create_dataset(team_id, "KB", vector_model="emb-a")
    collection = await platform.datasets.create_collection(team_id, dataset.id, "faq", type="virtual")
    await platform.ingestion.push_rows(collection, ROWS)
    return dataset.id, collection.id


async def _index_rows(db: Database, dataset_id: str) -> list[tuple[str, str, str, int]]:
    async with db.sessions() as session:
        rows = await session.execute(
            select(DataIndex.data_id, DataIndex.text, DataIndex.model, DataIndex.dims)
            .where(DataIndex.dataset_id == dataset_id)
            .order_by(DataIndex.data_id, DataIndex.text)
        )
        return [(r[0], r[1], r[2], int(r[3])) for r in rows]


async def _search(platform: Platform, team_id: str, dataset_id: str, query: str) -> list[Any]:
    result: Any = await platform.search.search(
        team_id, {"queries": [query], "datasetIds": [dataset_id], "searchMode": "embedding", "limit": 5000}
    )
    return list(result.search_res)


async def test_changing_the_vector_model_reembeds_every_index_text_then_switches(
    kb: tuple[Platform, Bootstrap],
) -> None:
    platform, boot = kb
    dataset_id, _ = await _dataset_with_rows(platform, boot.team_id)
    before = await _index_rows(platform.db, dataset_id)
    assert {(model, dims) for _, _, model, dims in before} == {("emb-a", 32)}

    change = await platform.reembed.change_model(boot.team_id, dataset_id, "emb-b")
    assert change.job is not None and change.job.kind == REEMBED_JOB_KIND
    assert (await platform.datasets.get_dataset(boot.team_id, dataset_id)).vector_model == "emb-a"
    assert await platform.reembed.pending_model(dataset_id) == "emb-b"

    assert await platform.new_worker().run_until_idle() == 1
    job = await platform.jobs.get(change.job.id)
    assert job.status == "done", job.last_error
    assert job.result == {"vectorModel": "emb-b", "reembedded": len(before), "switched": True}
    assert (await platform.datasets.get_dataset(boot.team_id, dataset_id)).vector_model == "emb-b"
    after = await _index_rows(platform.db, dataset_id)
    # the same index texts of the same chunks, now only with the new model's vectors
    assert sorted((d, t) for d, t, _, _ in after) == sorted((d, t) for d, t, _, _ in before)
    assert {(model, dims) for _, _, model, dims in after} == {("emb-b", 48)}
    assert await platform.reembed.pending_model(dataset_id) is None

    hits = await _search(platform, boot.team_id, dataset_id, "money back timing")
    assert hits[0].q == ROWS[0].q
    assert any(index["text"] == "money back timing" for index in hits[0].indexes)


class _FailingAfter:
    """An embedder that works for ``calls`` calls, then raises (a worker dying mid-job)."""

    def __init__(self, inner: Any, calls: int) -> None:
        self.inner, self.calls, self.texts = inner, calls, 0

    @property
    def model_id(self) -> str:
        return str(self.inner.model_id)

    @property
    def dimensions(self) -> int:
        return int(self.inner.dimensions)

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if self.calls <= 0:
            raise ConnectionError("embedding server went away")
        self.calls -= 1
        self.texts += len(texts)
        return list(await self.inner.embed(texts))


class _Resolver(EmbedderResolver):
    def __init__(self, base: EmbedderResolver, overrides: dict[str, Any]) -> None:
        super().__init__(base.registry)
        self.base, self.overrides = base, overrides

    def get(self, model_id: str) -> Any:
        return self.overrides.get(model_id) or self.base.get(model_id)


async def test_an_interrupted_reembed_keeps_search_on_the_old_vectors_and_resumes_without_duplicates(
    kb: tuple[Platform, Bootstrap],
) -> None:
    platform, boot = kb
    dataset_id, collection_id = await _dataset_with_rows(platform, boot.team_id)
    before = await _index_rows(platform.db, dataset_id)
    flaky = _FailingAfter(platform.embedders.get("emb-b"), calls=1)
    service = ReembedService(
        platform.datasets,
        SqlReembedRepository(platform.db),
        platform.jobs,
        _Resolver(platform.embedders, {"emb-b": flaky}),
        batch_chunks=2,
    )
    change = await service.change_model(boot.team_id, dataset_id, "emb-b")
    assert change.job is not None
    with pytest.raises(ConnectionError):
        await service.run(change.job)

    staged = [row for row in await _index_rows(platform.db, dataset_id) if row[2] == "emb-b"]
    assert 0 < len({row[0] for row in staged}) < len(ROWS)  # one batch of chunks staged, not all
    assert (await platform.datasets.get_dataset(boot.team_id, dataset_id)).vector_model == "emb-a"
    # search still runs on the old model, and shows each chunk's indexes once
    hits = await _search(platform, boot.team_id, dataset_id, "two year warranty")
    assert hits[0].q == ROWS[2].q
    assert len(hits) == len(ROWS)
    for hit in hits:
        assert len(hit.indexes) == len({index["text"] for index in hit.indexes})
    listed, _ = await platform.chunks.list_chunks(boot.team_id, collection_id)
    assert sum(len(row.indexes) for row in listed) == len(before)

    # a chunk added while the switch is pending is re-embedded too
    collection = await platform.datasets.get_collection(boot.team_id, collection_id)
    await platform.ingestion.push_rows(collection, [PushRow("Stores open at nine on Saturdays.")])

    flaky.calls = 100
    result = await service.run(change.job)  # the retry: resumes after the staged chunks
    assert result["switched"] is True
    after = await _index_rows(platform.db, dataset_id)
    assert len(after) == len(before) + 1
    assert {(model, dims) for _, _, model, dims in after} == {("emb-b", 48)}
    assert len({(d, t) for d, t, _, _ in after}) == len(after)  # nothing written twice
    assert flaky.texts == len(before) + 1  # each index text embedded once across both runs
    hits = await _search(platform, boot.team_id, dataset_id, "Stores open at nine on Saturdays.")
    assert hits[0].q == "Stores open at nine on Saturdays."


async def test_unknown_or_unchanged_model_queues_nothing(kb: tuple[Platform, Bootstrap]) -> None:
    platform, boot = kb
    dataset_id, _ = await _dataset_with_rows(platform, boot.team_id)
    with pytest.raises(UnknownEmbeddingModel):
        await platform.reembed.change_model(boot.team_id, dataset_id, "no-such-model")
    unchanged = await platform.reembed.change_model(boot.team_id, dataset_id, "emb-a")
    assert unchanged.job is None
    assert await platform.jobs.list_jobs(kind=REEMBED_JOB_KIND) == []


async def test_a_newer_model_change_supersedes_an_older_queued_one(kb: tuple[Platform, Bootstrap]) -> None:
    platform, boot = kb
    dataset_id, _ = await _dataset_with_rows(platform, boot.team_id)
    first = await platform.reembed.change_model(boot.team_id, dataset_id, "emb-b")
    second = await platform.reembed.change_model(boot.team_id, dataset_id, "emb-a")  # changed their mind
    assert first.job is not None and second.job is not None
    assert await platform.reembed.pending_model(dataset_id) == "emb-a"
    await platform.new_worker().run_until_idle()
    assert (await platform.jobs.get(first.job.id)).result == {
        "vectorModel": "emb-b",
        "reembedded": 0,
        "superseded": True,
    }
    assert (await platform.datasets.get_dataset(boot.team_id, dataset_id)).vector_model == "emb-a"
    async with platform.db.sessions() as session:
        models = set(await session.scalars(select(DataIndex.model).where(DataIndex.dataset_id == dataset_id)))
        count = await session.scalar(select(func.count()).select_from(DataIndex))
    assert models == {"emb-a"} and count == len(await _index_rows(platform.db, dataset_id))
