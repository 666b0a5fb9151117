"""Chunk and index sizes from the models (spec §5.2.1-2)."""

from __future__ import annotations

from fathom.knowledge.chunk_settings import (
    _llm_default_chunk_size,
    _llm_max_chunk_size,
    compute_chunk_settings,
    split_chunk_indexes,
)
from fathom.knowledge.text import valid_length


def test_llm_chunk_sizes_follow_fastgpt_formulas() -> None:
    assert _llm_default_chunk_size() == 8000
    assert _llm_default_chunk_size(16000, 4000) == 8000
    assert _llm_default_chunk_size(4000, 1000) == 3000
    assert _llm_default_chunk_size(2000, 1000) == 2000
    assert _llm_max_chunk_size(128000, 4000) == 124000
    assert _llm_max_chunk_size(1500, 1000) == 2000


def test_auto_mode_uses_1000_and_the_embedding_default_index_size() -> None:
    s = compute_chunk_settings(embedding_max_tokens=256, embedding_default_tokens=128, chunk_size=50)
    assert (s.chunk_size, s.index_size, s.max_index_size, s.paragraph_chunk_deep) == (1000, 128, 256, 5)
    assert compute_chunk_settings().index_size == 512


def test_qa_mode_uses_the_llm_chunk_size_and_the_max_index_size() -> None:
    s = compute_chunk_settings(
        training_type="qa", embedding_max_tokens=1024, llm_max_context=16000, llm_max_response=4000
    )
    assert (s.chunk_size, s.index_size) == (8000, 1024)


def test_custom_mode_caps_chunk_size_and_keeps_depth_only_for_paragraph_split() -> None:
    s = compute_chunk_settings(
        mode="custom",
        chunk_size=50000,
        llm_max_context=8000,
        llm_max_response=2000,
        split_mode="size",
        index_size=4096,
        embedding_max_tokens=512,
    )
    assert (s.chunk_size, s.index_size, s.paragraph_chunk_deep) == (6000, 512, 0)
    assert compute_chunk_settings(mode="custom", chunk_size=10).chunk_size == 64


def test_chunk_indexes_are_split_to_the_index_size() -> None:
    s = compute_chunk_settings(embedding_max_tokens=256, embedding_default_tokens=128)
    q = " ".join(f"Fact number {i} is true." for i in range(60))
    indexes = split_chunk_indexes(q, "short answer", s)
    assert len(indexes) > 3
    assert indexes[-1] == "short answer"
    assert all(valid_length(t) <= int(128 * 1.2) for t in indexes)
