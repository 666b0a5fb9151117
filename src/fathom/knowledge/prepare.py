"""Parse -> chunk -> embed for one document: what an ingestion job calls.

``prepare_document`` (CPU-bound, synchronous: run it in a worker thread) turns a file into chunks with
their default indexes; ``embed_prepared_chunks`` embeds every index in batches. The storage side then
writes, per chunk, the chunk row, one full-text row and one vector row per index (``TextRecord`` /
``VectorRecord``) in one transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fathom.knowledge.chunk import split_text_to_chunks
from fathom.knowledge.chunk_settings import ChunkSettings, compute_chunk_settings, split_chunk_indexes
from fathom.knowledge.parse import ParsedDocument, parse_document
from fathom.knowledge.search.recall import embed_texts


@dataclass(frozen=True)
class PreparedChunk:
    """One chunk (``q``; ``a`` stays empty outside QA mode) and the texts of its default indexes."""

    chunk_index: int
    q: str
    a: str = ""
    indexes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class PreparedDocument:
    """A parsed document and its chunks."""

    parsed: ParsedDocument
    chunks: list[PreparedChunk]
    settings: ChunkSettings


def chunk_text(text: str, settings: ChunkSettings) -> list[PreparedChunk]:
    """Split ``text`` by ``settings`` and attach each chunk's default indexes (index size split)."""
    chunks = split_text_to_chunks(text, settings.split_options())
    return [
        PreparedChunk(chunk_index=i, q=chunk, indexes=split_chunk_indexes(chunk, "", settings) or [chunk])
        for i, chunk in enumerate(chunks)
    ]


def prepare_document(
    data: bytes | Path,
    filename: str | None = None,
    *,
    settings: ChunkSettings | None = None,
    fmt: str | None = None,
) -> PreparedDocument:
    """Parse a file and chunk it (settings default to FastGPT's auto settings)."""
    resolved = settings or compute_chunk_settings()
    parsed = parse_document(data, filename, fmt=fmt)
    return PreparedDocument(parsed=parsed, chunks=chunk_text(parsed.text, resolved), settings=resolved)


@dataclass(frozen=True)
class EmbeddedChunks:
    """``vectors[i][j]`` is the vector of ``chunks[i].indexes[j]``; ``tokens`` as reported (or None)."""

    model_id: str
    vectors: list[list[list[float]]]
    tokens: int | None


async def embed_prepared_chunks(
    chunks: Sequence[PreparedChunk], embedder: Any, *, batch_size: int = 32
) -> EmbeddedChunks:
    """Embed every index text of ``chunks`` in batches of ``batch_size`` (order kept)."""
    flat = [(i, text) for i, chunk in enumerate(chunks) for text in chunk.indexes]
    vectors: list[list[list[float]]] = [[] for _ in chunks]
    tokens: int | None = 0
    for start in range(0, len(flat), batch_size):
        batch = flat[start : start + batch_size]
        batch_vectors, reported = await embed_texts(embedder, [text for _, text in batch])
        tokens = None if reported is None or tokens is None else tokens + reported
        for (chunk_position, _), vector in zip(batch, batch_vectors, strict=True):
            vectors[chunk_position].append(vector)
    return EmbeddedChunks(model_id=str(getattr(embedder, "model_id", "")), vectors=vectors, tokens=tokens)
