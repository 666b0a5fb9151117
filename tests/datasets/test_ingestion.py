"""Ingestion end to end on both backends: text, file or link in; chunks indexed and searchable."""

from __future__ import annotations

from typing import Any

from fathom.llm.local_embedding import LOCAL_EMBEDDING_MODEL_ID
from fathom.platform import Bootstrap, Platform

TEXT = "\n\n".join(
    f"## Section {i}\n\n"
    + " ".join(
        f"Paragraph {i}.{j} explains how the {topic} works in practice and why operators care about it."
        for j in range(6)
    )
    for i, topic in enumerate(["vector index", "job queue", "egress guard", "workflow engine", "tokenizer"])
)


async def _run_jobs(platform: Platform) -> int:
    return await platform.new_worker(retry_delay_seconds=0).run_until_idle()


async def test_text_collection_goes_from_waiting_to_ready_and_is_searchable(
    platform: tuple[Platform, Bootstrap],
) -> None:
    p, boot = platform
    dataset = await p.datasets.create_dataset(boot.team_id, "Docs", vector_model=LOCAL_EMBEDDING_MODEL_ID)
    collection = await p.datasets.create_collection(
        boot.team_id, dataset.id, "manual", type="virtual", raw_text=TEXT, chunk_settings={"chunkSize": 200}
    )
    await p.ingestion.enqueue(collection)
    assert (await p.datasets.get_collection(boot.team_id, collection.id)).status == "waiting"
    assert await _run_jobs(p) == 1
    ready = await p.datasets.get_collection(boot.team_id, collection.id)
    assert ready.status == "ready" and ready.error is None
    assert ready.chunks_total == ready.chunks_done > 3
    rows, total = await p.chunks.list_chunks(boot.team_id, collection.id, limit=100)
    assert total == ready.chunks_total and [r.chunk_index for r in rows] == list(range(total))
    assert all(len(r.indexes) >= 1 for r in rows)
    result: Any = await p.search.search(
        boot.team_id,
        {
            "queries": ["how does the egress guard work"],
            "datasetIds": [dataset.id],
            "searchMode": "mixedRecall",
            "limit": 5000,
        },
    )
    assert result.search_res and "egress guard" in result.search_res[0].q
    stages = {entry.stage for entry in result.search_res[0].trace.stages}
    assert {"embeddingRecall", "fullTextRecall", "convex"} <= stages  # the default fusion


async def test_file_collection_is_parsed_before_chunking(platform: tuple[Platform, Bootstrap]) -> None:
    p, boot = platform
    dataset = await p.datasets.create_dataset(boot.team_id, "Files", vector_model=LOCAL_EMBEDDING_MODEL_ID)
    html = (
        b"<html><body><nav>Home | About</nav><article><h1>Refunds</h1><p>" + b"Refunds take five days. " * 30
    )
    html += b"</p></article></body></html>"
    stored = await p.files.save(boot.team_id, "refunds.html", html, content_type="text/html")
    collection = await p.datasets.create_collection(
        boot.team_id, dataset.id, "refunds.html", type="file", file_id=stored.id
    )
    await p.ingestion.enqueue(collection)
    await _run_jobs(p)
    rows, _ = await p.chunks.list_chunks(boot.team_id, collection.id)
    assert rows and "Refunds take five days" in rows[0].q


async def test_a_source_that_cannot_be_read_ends_in_error_with_the_reason(
    platform: tuple[Platform, Bootstrap],
) -> None:
    p, boot = platform
    dataset = await p.datasets.create_dataset(boot.team_id, "Bad", vector_model=LOCAL_EMBEDDING_MODEL_ID)
    stored = await p.files.save(boot.team_id, "broken.pdf", b"%PDF-1.4 not really a pdf")
    collection = await p.datasets.create_collection(
        boot.team_id, dataset.id, "broken.pdf", type="file", file_id=stored.id
    )
    job = await p.ingestion.enqueue(collection)
    await _run_jobs(p)  # three attempts, no delay between them
    failed = await p.datasets.get_collection(boot.team_id, collection.id)
    assert failed.status == "error" and failed.error and "broken.pdf" in failed.error
    assert (await p.jobs.get(job.id)).status == "failed"


async def test_a_link_to_an_internal_address_is_refused_by_the_egress_guard(
    platform: tuple[Platform, Bootstrap],
) -> None:
    p, boot = platform
    dataset = await p.datasets.create_dataset(boot.team_id, "Links", vector_model=LOCAL_EMBEDDING_MODEL_ID)
    collection = await p.datasets.create_collection(
        boot.team_id, dataset.id, "metadata", type="link", raw_link="http://169.254.169.254/latest/meta-data/"
    )
    await p.ingestion.enqueue(collection)
    await _run_jobs(p)
    failed = await p.datasets.get_collection(boot.team_id, collection.id)
    assert failed.status == "error" and "not allowed" in (failed.error or "")


async def test_rerunning_an_interrupted_ingestion_neither_loses_nor_duplicates_chunks(
    platform: tuple[Platform, Bootstrap],
) -> None:
    p, boot = platform
    dataset = await p.datasets.create_dataset(boot.team_id, "Resume", vector_model=LOCAL_EMBEDDING_MODEL_ID)
    collection = await p.datasets.create_collection(
        boot.team_id, dataset.id, "manual", type="virtual", raw_text=TEXT, chunk_settings={"chunkSize": 120}
    )
    job = await p.ingestion.enqueue(collection)
    embedder = p.embedders.get(LOCAL_EMBEDDING_MODEL_ID)
    calls = 0
    original = embedder.embed

    async def dies_on_second_batch(texts: Any) -> list[list[float]]:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise ConnectionError("embedding server went away")
        return await original(texts)

    embedder.embed = dies_on_second_batch  # type: ignore[method-assign]
    import fathom.datasets.ingest as ingest

    old_batch = ingest.EMBED_BATCH_SIZE
    ingest.EMBED_BATCH_SIZE = 4
    try:
        await _run_jobs(p)
    finally:
        ingest.EMBED_BATCH_SIZE = old_batch
        embedder.embed = original  # type: ignore[method-assign]
    done = await p.datasets.get_collection(boot.team_id, collection.id)
    record = await p.jobs.get(job.id)
    assert record.status == "done" and record.attempts == 2 and record.result is not None
    assert record.result["skipped"] == 4  # the first batch survived the failure and was not redone
    rows, total = await p.chunks.list_chunks(boot.team_id, collection.id, limit=1000)
    assert done.status == "ready" and total == done.chunks_total
    assert sorted(r.chunk_index for r in rows) == list(range(total))
