"""Each chunk's token count (cl100k, q + a) is stored when it is written, on both backends: by ingestion,
by pushData rows and by an edit; searches return it (FastGPT's ``tokens``) and the token budget reads it."""

from __future__ import annotations

from typing import Any

from fathom.datasets.ingest import PushRow
from fathom.llm import count_tokens
from fathom.llm.local_embedding import LOCAL_EMBEDDING_MODEL_ID
from fathom.platform import Bootstrap, Platform

TEXT = "\n\n".join(
    f"## Part {i}\n\nThe {topic} keeps its promises: every request is checked twice, logged and answered."
    for i, topic in enumerate(["gateway", "scheduler", "indexer"])
)


async def test_ingested_and_pushed_chunks_carry_their_token_counts(
    platform: tuple[Platform, Bootstrap],
) -> None:
    p, boot = platform
    dataset = await p.datasets.create_dataset(boot.team_id, "T", vector_model=LOCAL_EMBEDDING_MODEL_ID)
    collection = await p.datasets.create_collection(
        boot.team_id, dataset.id, "doc", type="virtual", raw_text=TEXT
    )
    await p.ingestion.enqueue(collection)
    await p.new_worker(retry_delay_seconds=0).run_until_idle()
    pushed = await p.datasets.create_collection(boot.team_id, dataset.id, "faq", type="virtual")
    await p.ingestion.push_rows(pushed, [PushRow("What does the gateway do?", "It checks every request.")])
    for collection_id in (collection.id, pushed.id):
        rows, _ = await p.chunks.list_chunks(boot.team_id, collection_id, limit=50)
        assert rows and all(r.tokens == count_tokens(r.q + r.a) for r in rows)

    result: Any = await p.search.search(
        boot.team_id,
        {"queries": ["what does the gateway check"], "datasetIds": [dataset.id], "searchMode": "mixedRecall"},
    )
    assert result.search_res
    assert all(item.tokens == count_tokens(item.q + item.a) for item in result.search_res)
    assert all(item.model_dump(by_alias=True)["tokens"] == item.tokens for item in result.search_res)

    row = rows[0]
    await p.chunks.update_chunk(
        boot.team_id,
        row.id,
        q="A much longer question about the gateway and what it checks, twice over?",
        a="Everything.",
        index_texts=["x"],
        vectors=[[0.1] * 384],
        model=LOCAL_EMBEDDING_MODEL_ID,
        tokens=17,
    )
    edited, _ = await p.chunks.list_chunks(boot.team_id, pushed.id, limit=50)
    assert edited[0].tokens == 17
