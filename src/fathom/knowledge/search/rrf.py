"""Weighted reciprocal rank fusion (spec §5.4, FastGPT ``datasetSearchResultConcat``).

Each list has a weight ``w``; an item at 1-based rank ``r`` earns ``w * 1/(60 + r)``; earnings are
summed per item id. Empty lists are dropped; with exactly one list left it is returned unchanged (no
``rrf`` score added). Score arrays of repeated ids merge (same type: the larger value wins; new types
are appended); other fields come from the first occurrence. The fused list is sorted by the sum
(stable, so ties keep first-appearance order) and every item gets an ``rrf`` score whose ``index``
is its final position.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fathom.knowledge.search.types import SearchDataItem, SearchScore, TraceEntry, TraceStage

RRF_K = 60


@dataclass(frozen=True)
class RrfInput:
    """One ranked list with its weight; ``name`` only labels the trace."""

    weight: float
    items: Sequence[SearchDataItem | Mapping[str, Any]]
    name: str = ""


def merge_scores(first: list[SearchScore], other: list[SearchScore]) -> list[SearchScore]:
    """FastGPT's score-array merge for a repeated id: same type keeps the larger value, new types append."""
    merged = list(first)
    for entry in other:
        for i, existing in enumerate(merged):
            if existing.type == entry.type:
                if entry.value > existing.value:
                    merged[i] = entry
                break
        else:
            merged.append(entry)
    return merged


def dataset_search_result_concat(
    inputs: Sequence[RrfInput | tuple[float, Sequence[SearchDataItem | Mapping[str, Any]]]],
    *,
    stage: TraceStage = "rrf",
) -> list[SearchDataItem]:
    """Fuse ranked lists by weighted RRF (k = 60); see the module docstring for the exact rules."""
    lists = [
        item if isinstance(item, RrfInput) else RrfInput(weight=item[0], items=item[1]) for item in inputs
    ]
    lists = [entry for entry in lists if entry.items]
    if not lists:
        return []
    if len(lists) == 1:
        return [SearchDataItem.of(item) for item in lists[0].items]

    fused: dict[str, SearchDataItem] = {}
    sums: dict[str, float] = {}
    details: dict[str, list[str]] = {}
    for source in lists:
        for rank, raw in enumerate(source.items, start=1):
            item = SearchDataItem.of(raw)
            contribution = source.weight * (1 / (RRF_K + rank))
            details.setdefault(item.id, []).append(f"{source.name or 'list'}#{rank}×{source.weight:g}")
            if item.id in fused:
                first = fused[item.id]
                known = first.trace.stages
                extra = [entry for entry in item.trace.stages if entry not in known]
                trace = first.trace.copy_with({"stages": [*known, *extra]})
                fused[item.id] = first.copy_with(
                    {"score": merge_scores(first.score, item.score), "trace": trace}
                )
                sums[item.id] += contribution
            else:
                fused[item.id] = item
                sums[item.id] = contribution

    order = sorted(fused, key=lambda data_id: -sums[data_id])  # sorted() is stable
    result: list[SearchDataItem] = []
    for position, data_id in enumerate(order):
        item = fused[data_id]
        scores = [s for s in item.score if s.type != "rrf"]
        scores.append(SearchScore(type="rrf", value=sums[data_id], index=position))
        entry = TraceEntry(
            stage=stage, score=sums[data_id], rank=position, detail=" + ".join(details[data_id])
        )
        result.append(item.traced(entry, scores=scores))
    return result
