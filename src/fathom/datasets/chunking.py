"""How a collection's text becomes chunks, shared by ingestion and the chunk preview.

The chosen settings are the dataset's overlaid by the collection's (FastGPT's ``chunkSettings`` names plus
Fathom's ``chunkOverlapRatio``, ``chunkSplitRule`` and ``qaPairs``). Sizes, separators or an overlap make
the mode custom; with none of them it is FastGPT's auto mode. ``chunkSplitRule`` (``"fathom"`` or
``"fastgpt"``) chooses the splitter's algorithm in either mode. With ``qaPairs`` the text is a table of
question/answer rows (one chunk each) instead of prose to split.
"""

from __future__ import annotations

from typing import Any, cast

from fathom.datasets.embedders import EmbedderResolver
from fathom.knowledge.chunk import (
    DEFAULT_SPLIT_RULE,
    OVERLAP_RATIO,
    SPLIT_RULES,
    SplitRule,
    split_text_to_chunks,
)
from fathom.knowledge.chunk_settings import ChunkSettings
from fathom.knowledge.qa_pairs import split_qa_pairs


def _separators_of(chosen: dict[str, Any]) -> tuple[str, ...]:
    separators = chosen.get("chunkSplitter") or chosen.get("customSeparators") or ()
    if isinstance(separators, str):
        separators = (separators,)
    return tuple(str(s) for s in separators if s)


def split_rule_of(chosen: dict[str, Any]) -> SplitRule:
    """The splitter algorithm the settings choose (``chunkSplitRule``), else the default."""
    rule = chosen.get("chunkSplitRule")
    return cast(SplitRule, rule) if rule in SPLIT_RULES else DEFAULT_SPLIT_RULE


def collection_chunk_settings(
    embedders: EmbedderResolver, model_id: str, chosen: dict[str, Any]
) -> ChunkSettings:
    """The resolved settings of a collection embedded with ``model_id``."""
    separators = _separators_of(chosen)
    overlap = chosen.get("chunkOverlapRatio")
    custom = bool(chosen.get("chunkSize") or separators or overlap is not None)
    return embedders.chunk_settings(
        model_id,
        mode="custom" if custom else "auto",
        chunk_size=chosen.get("chunkSize"),
        index_size=chosen.get("indexSize"),
        custom_separators=separators,
        overlap_ratio=OVERLAP_RATIO if overlap is None else float(overlap),
        split_rule=split_rule_of(chosen),
    )


def split_collection_text(
    text: str, settings: ChunkSettings, *, qa_pairs: bool = False
) -> list[tuple[str, str]]:
    """The (q, a) chunks of ``text``: split prose (``a`` empty), or the table's question/answer rows."""
    if qa_pairs:
        return split_qa_pairs(text)
    return [(piece, "") for piece in split_text_to_chunks(text, settings.split_options()) if piece.strip()]
