"""parse -> chunk -> embed, as an ingestion job runs it."""

from __future__ import annotations

import numpy as np

from fathom.knowledge.chunk_settings import compute_chunk_settings
from fathom.knowledge.prepare import embed_prepared_chunks, prepare_document
from fathom.knowledge.text import valid_length
from fathom.llm.local_embedding import LocalEmbedder


async def test_markdown_file_is_parsed_chunked_indexed_and_embedded(local_embedder: LocalEmbedder) -> None:
    body = " ".join(f"Statement {i} about vitamin D and bone density holds." for i in range(80))
    text = f"# Vitamins\n\n{body}\n\n## Tables\n\n| a | b |\n| - | - |\n| 1 | 2 |\n"
    settings = compute_chunk_settings(mode="custom", chunk_size=600, index_size=128, embedding_max_tokens=256)
    prepared = prepare_document(text.encode(), "notes.md", settings=settings)
    assert prepared.parsed.metadata["filename"] == "notes.md"
    assert len(prepared.chunks) >= 6
    assert [c.chunk_index for c in prepared.chunks] == list(range(len(prepared.chunks)))
    for chunk in prepared.chunks:
        assert valid_length(chunk.q) <= 720
        assert chunk.indexes and all(valid_length(t) <= int(128 * 1.2) for t in chunk.indexes)
    embedded = await embed_prepared_chunks(prepared.chunks, local_embedder, batch_size=7)
    assert embedded.model_id == "local/all-MiniLM-L6-v2-int8"
    assert [len(v) for v in embedded.vectors] == [len(c.indexes) for c in prepared.chunks]
    first = prepared.chunks[0].indexes[0]
    again = (await local_embedder.embed([first]))[0]
    assert float(np.dot(embedded.vectors[0][0], again)) > 0.9999  # batching keeps order
    assert embedded.tokens is None  # the local embedder reports no usage
