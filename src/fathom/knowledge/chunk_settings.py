"""Chunk and index sizes (spec §5.2.1-2, FastGPT ``core/dataset/training/utils.ts``).

A collection is cut into *chunks* (what a search returns and a model reads) and every chunk into
*indexes* (what is embedded). Index sizes come from the embedding model: default = its
``defaultToken``, max = its ``maxToken`` (512 when unknown). Chunk sizes in QA mode come from the LLM.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from fathom.knowledge.chunk import (
    DEFAULT_PARAGRAPH_CHUNK_DEEP,
    DEFAULT_SPLIT_RULE,
    OVERLAP_RATIO,
    SplitOptions,
    SplitRule,
    split_text_to_chunks,
)

MIN_CHUNK_SIZE = 64
CHUNK_AUTO_CHUNK_SIZE = 1000  # DRIFT: 1500 in older FastGPT
DEFAULT_MAX_CHUNK_SIZE = 8000
DEFAULT_INDEX_SIZE = 512
PARAGRAPH_CHUNK_MIN_SIZE = 100
INDEX_SIZE_OPTIONS = (64, 128, 256, 512, 768, 1024, 1536, 2048, 3072, 4096, 5120, 6144, 7168, 8192)

TrainingType = Literal["chunk", "qa"]
ChunkSettingMode = Literal["auto", "custom"]
ChunkSplitMode = Literal["paragraph", "size", "char"]


def _llm_default_chunk_size(max_context: int | None = None, max_response: int | None = None) -> int:
    """``getLLMDefaultChunkSize``: ``max(min(maxContext - maxResponse, 8000), 2000)``; 8000 with no model."""
    if max_context is None:
        return DEFAULT_MAX_CHUNK_SIZE
    return max(min(max_context - (max_response or 0), DEFAULT_MAX_CHUNK_SIZE), 2000)


def _llm_max_chunk_size(max_context: int | None = None, max_response: int | None = None) -> int:
    """``getLLMMaxChunkSize``: ``max(maxContext - maxResponse, 2000)``; 8000 with no model."""
    if max_context is None:
        return DEFAULT_MAX_CHUNK_SIZE
    return max(max_context - (max_response or 0), 2000)


def _max_index_size(embedding_max_tokens: int | None) -> int:
    """``getMaxIndexSize``: the embedding model's ``maxToken`` or 512."""
    return embedding_max_tokens or DEFAULT_INDEX_SIZE


def _auto_index_size(embedding_default_tokens: int | None) -> int:
    """``getAutoIndexSize``: the embedding model's ``defaultToken`` or 512."""
    return embedding_default_tokens or DEFAULT_INDEX_SIZE


@dataclass(frozen=True)
class ChunkSettings:
    """Resolved settings of one collection (``computedCollectionChunkSettings``)."""

    chunk_size: int
    index_size: int
    max_index_size: int
    paragraph_chunk_deep: int = DEFAULT_PARAGRAPH_CHUNK_DEEP
    paragraph_chunk_min_size: int = PARAGRAPH_CHUNK_MIN_SIZE
    custom_separators: tuple[str, ...] = ()
    training_type: TrainingType = "chunk"
    overlap_ratio: float = OVERLAP_RATIO
    split_rule: SplitRule = DEFAULT_SPLIT_RULE
    max_chunk_size: int = DEFAULT_MAX_CHUNK_SIZE  # FastGPT's maxSize for chunks: the LLM's limit

    def split_options(self) -> SplitOptions:
        return SplitOptions(
            chunk_size=self.chunk_size,
            overlap_ratio=self.overlap_ratio,
            paragraph_chunk_deep=self.paragraph_chunk_deep,
            custom_separators=self.custom_separators,
            rule=self.split_rule,
            max_size=self.max_chunk_size,
        )


def compute_chunk_settings(
    *,
    training_type: TrainingType = "chunk",
    mode: ChunkSettingMode = "auto",
    split_mode: ChunkSplitMode = "paragraph",
    chunk_size: int | None = None,
    index_size: int | None = None,
    paragraph_chunk_deep: int = DEFAULT_PARAGRAPH_CHUNK_DEEP,
    custom_separators: tuple[str, ...] = (),
    overlap_ratio: float = OVERLAP_RATIO,
    split_rule: SplitRule = DEFAULT_SPLIT_RULE,
    embedding_max_tokens: int | None = None,
    embedding_default_tokens: int | None = None,
    llm_max_context: int | None = None,
    llm_max_response: int | None = None,
) -> ChunkSettings:
    """Resolve a collection's chunk settings the way FastGPT does.

    Auto mode: paragraph split, depth 5, chunk size 1000 (QA: from the LLM), index size from the
    embedding model (QA: its maximum), no custom separator. Custom mode: the given sizes, the chunk size
    capped by ``llm_max_chunk_size`` and floored at 64, the depth kept only for paragraph split.
    ``overlap_ratio`` (Fathom: FastGPT fixes it at 0.15) and ``split_rule`` (Fathom's or FastGPT's
    algorithm) apply in both modes.
    """
    maximum = _max_index_size(embedding_max_tokens)
    max_chunk = _llm_max_chunk_size(llm_max_context, llm_max_response)
    if training_type == "qa":
        auto_chunk, auto_index = _llm_default_chunk_size(llm_max_context, llm_max_response), maximum
    else:
        auto_chunk, auto_index = CHUNK_AUTO_CHUNK_SIZE, _auto_index_size(embedding_default_tokens)
    if mode == "auto":
        return ChunkSettings(
            auto_chunk,
            min(auto_index, maximum),
            maximum,
            training_type=training_type,
            overlap_ratio=overlap_ratio,
            split_rule=split_rule,
            max_chunk_size=max_chunk,
        )
    resolved_chunk = auto_chunk if chunk_size is None else chunk_size
    resolved_chunk = max(min(resolved_chunk, max_chunk), MIN_CHUNK_SIZE)
    resolved_index = maximum if training_type == "qa" else (index_size or auto_index)
    return ChunkSettings(
        chunk_size=resolved_chunk,
        index_size=max(min(resolved_index, maximum), MIN_CHUNK_SIZE),
        max_index_size=maximum,
        paragraph_chunk_deep=paragraph_chunk_deep if split_mode == "paragraph" else 0,
        custom_separators=custom_separators,
        training_type=training_type,
        overlap_ratio=overlap_ratio,
        split_rule=split_rule,
        max_chunk_size=max_chunk,
    )


def split_chunk_indexes(q: str, a: str, settings: ChunkSettings) -> list[str]:
    """The default indexes of one chunk (``formatIndexes``): ``q`` and ``a`` each split to the index size
    (FastGPT's rule: with the model's maximum index size as ``maxSize``)."""
    options = SplitOptions(
        chunk_size=settings.index_size, rule=settings.split_rule, max_size=settings.max_index_size
    )
    texts = split_text_to_chunks(q, options)
    if a:
        texts += split_text_to_chunks(a, options)
    return texts
