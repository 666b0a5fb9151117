"""The import preview: the chunks a text or a file would become with some chunk settings, before
anything is stored. The knowledge base's embedding model sets the index size, as in ingestion."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from fathom.datasets.chunking import collection_chunk_settings, split_collection_text
from fathom.datasets.embedders import EmbedderResolver
from fathom.datasets.errors import InvalidDatasetRequest
from fathom.knowledge.chunk_settings import ChunkSettings
from fathom.knowledge.parse import DocumentParseError, decode_text, parse_document
from fathom.store.protocols import DatasetRecord


@dataclass(frozen=True)
class ChunkPreview:
    """Every (q, a) chunk, the settings they were cut with, and whether the text was read as q/a pairs."""

    chunks: list[tuple[str, str]]
    settings: ChunkSettings
    qa_pairs: bool


class ChunkPreviewer:
    def __init__(self, embedders: EmbedderResolver) -> None:
        self.embedders = embedders

    async def file_text(self, name: str, content: bytes, *, qa_pairs: bool) -> str:
        """The text of an uploaded file (decoded as it is for q/a pairs, else parsed by its format)."""
        if not content:
            raise InvalidDatasetRequest("file is empty")
        if qa_pairs:
            return decode_text(content)[0]
        try:
            parsed_file = await asyncio.to_thread(parse_document, content, name)
        except DocumentParseError as exc:
            raise InvalidDatasetRequest(f"file: {exc}") from None
        return parsed_file.text

    async def preview(
        self, dataset: DatasetRecord, chunk_settings: dict[str, Any], text: str
    ) -> ChunkPreview:
        """Cut ``text`` with the knowledge base's chunk settings overlaid by ``chunk_settings``."""
        chosen = {**dataset.chunk_settings, **chunk_settings}
        settings = collection_chunk_settings(self.embedders, dataset.vector_model, chosen)
        qa_pairs = bool(chosen.get("qaPairs"))
        chunks = await asyncio.to_thread(split_collection_text, text, settings, qa_pairs=qa_pairs)
        return ChunkPreview(chunks, settings, qa_pairs)
