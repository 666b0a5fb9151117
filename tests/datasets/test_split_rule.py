"""A collection's ``chunkSplitRule`` reaches the splitter: ingestion cuts a ``"fastgpt"`` collection with
FastGPT's algorithm, pushData rows get FastGPT's index texts under a ``"fastgpt"`` dataset, and a collection
without the setting keeps the default rule, on both backends."""

from __future__ import annotations

from fathom.datasets.ingest import PushRow
from fathom.knowledge.chunk import DEFAULT_SPLIT_RULE
from fathom.llm.local_embedding import LOCAL_EMBEDDING_MODEL_ID
from fathom.platform import Bootstrap, Platform

# FastGPT keeps the source's line break after a heading path and a line's trailing blanks; Fathom's rule
# writes a blank line there and drops them
TEXT = "# Gateway\nIt checks every request.\n## Limits\nA hundred per second.  \nThen it waits."
FASTGPT = [
    "# Gateway\nIt checks every request.",
    "# Gateway\n## Limits\nA hundred per second.  \nThen it waits.",
]
FATHOM = [
    "# Gateway\n\nIt checks every request.",
    "# Gateway\n## Limits\n\nA hundred per second.\nThen it waits.",
]


async def _chunks(p: Platform, boot: Bootstrap, dataset_id: str, settings: dict[str, str]) -> list[str]:
    collection = await p.datasets.create_collection(
        boot.team_id, dataset_id, "doc", type="virtual", raw_text=TEXT, chunk_settings=settings
    )
    await p.ingestion.enqueue(collection)
    await p.new_worker(retry_delay_seconds=0).run_until_idle()
    rows, _ = await p.chunks.list_chunks(boot.team_id, collection.id, limit=50)
    return [row.q for row in sorted(rows, key=lambda r: r.chunk_index)]


async def test_ingestion_follows_the_collections_split_rule(platform: tuple[Platform, Bootstrap]) -> None:
    p, boot = platform
    dataset = await p.datasets.create_dataset(boot.team_id, "T", vector_model=LOCAL_EMBEDDING_MODEL_ID)
    assert await _chunks(p, boot, dataset.id, {"chunkSplitRule": "fastgpt"}) == FASTGPT
    assert await _chunks(p, boot, dataset.id, {"chunkSplitRule": "fathom"}) == FATHOM
    default = FASTGPT if DEFAULT_SPLIT_RULE == "fastgpt" else FATHOM
    assert await _chunks(p, boot, dataset.id, {}) == default


async def test_pushed_rows_get_the_datasets_split_rule_for_their_indexes(
    platform: tuple[Platform, Bootstrap],
) -> None:
    p, boot = platform
    q = "A hundred per second.  \nThen it waits."
    texts = {}
    for rule in ("fastgpt", "fathom"):
        dataset = await p.datasets.create_dataset(
            boot.team_id, rule, vector_model=LOCAL_EMBEDDING_MODEL_ID, chunk_settings={"chunkSplitRule": rule}
        )
        collection = await p.datasets.create_collection(boot.team_id, dataset.id, "faq", type="virtual")
        await p.ingestion.push_rows(collection, [PushRow(q, "")])
        rows, _ = await p.chunks.list_chunks(boot.team_id, collection.id, limit=50)
        texts[rule] = [index["text"] for index in rows[0].indexes]
    assert texts == {"fastgpt": [q], "fathom": ["A hundred per second.\nThen it waits."]}
