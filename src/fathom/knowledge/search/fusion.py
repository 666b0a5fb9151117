"""Convex-combination fusion of recall legs (Bruch, Gai and Ingber 2023, "An Analysis of Fusion Functions
for Hybrid Retrieval"): mixedRecall's default fusion (``fathom.knowledge.search.hybrid``; FastGPT's weighted
RRF stays available as ``fusion: "rrf"``).

Each leg's raw scores (the item's score entry of the leg's type: cosine for ``embedding``, BM25 for
``fullText``) are normalised to [0, 1] within the leg's recalled list, ``(s - lower) / (max - lower)``:

* ``minmax`` (the default): ``lower`` is the list's own minimum (its last item gets 0);
* ``tmm`` (theoretical min-max, Bruch et al.'s recommendation): ``lower`` is the score's theoretical
  minimum (cosine -1, BM25 0), or the list's minimum when that is lower, so a leg whose best hit is weak
  stays weak.

On SciFact train (809 queries, ``docs/benchmarks.md``) the two tie at their best weights (min-max 0.737
at ``embeddingWeight`` 0.5, TMM 0.736 at 0.85); min-max is the default because its best weight is the
wire default 0.5 (TMM at 0.5: 0.720, the cosine range squeezed into [0.5, 1] needs a heavier weight).

A list whose scores are all equal normalises to 1 (every item is the leg's best). The fused score is
``sum(weight * normalised)``; an item a leg did not recall counts that leg's lower bound (0). With weights
``w`` and ``1 - w`` the fused score lies in [0, 1]. Ties are broken by the item's rank in the
heaviest leg, then in the next one, then by first appearance, so weight 1 reproduces the first leg's order
and weight 0 the second's. Unlike RRF, a leg is kept even at weight 0 (its items rank after the others);
the pipeline drops legs whose weight is <= 0, as it does for RRF.

Every fused item gets a fused score typed ``rrf`` (value, final position) and a ``convex`` trace entry
whose detail names each leg's raw and normalised value. The score keeps FastGPT's type for "the fused
score" because the API's ``score[].type`` is FastGPT's vocabulary (``embedding``, ``fullText``,
``reRank``, ``rrf``), which every FastGPT client knows; which formula made the value is Fathom's detail,
told by the trace's stage (``convex`` or ``rrf``). Nothing downstream reads an ``rrf`` value as an RRF
sum (the similarity filter reads ``embedding``/``reRank``; rerank fusion and the concat node fuse by rank
and set a fresh ``rrf``). An ``rrf`` score a leg carried (several queries fused per leg) is replaced. With
several queries a leg's raw score is the best one over the queries (score arrays merge by maximum).
Repeated ids merge like RRF's: score arrays per type keep the larger value, trace stages are united,
other fields come from the first occurrence.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from fathom.knowledge.search.rrf import merge_scores
from fathom.knowledge.search.types import ScoreType, SearchDataItem, SearchScore, TraceEntry, TraceStage

Normalization = Literal["tmm", "minmax"]
NORMALIZATIONS: tuple[Normalization, ...] = ("tmm", "minmax")
DEFAULT_NORMALIZATION: Normalization = "minmax"

# the theoretical minimum of each leg's raw score (TMM): cosine similarity and BM25
THEORETICAL_MIN: dict[str, float] = {"embedding": -1.0, "fullText": 0.0}


@dataclass(frozen=True)
class ConvexInput:
    """One recalled list, its weight and the score type holding its raw scores; ``name`` labels the trace."""

    weight: float
    items: Sequence[SearchDataItem | Mapping[str, Any]]
    score_type: ScoreType
    name: str = ""


def _normalize_scores(values: Sequence[float], lower_bound: float | None) -> list[float]:
    """``values`` scaled to [0, 1] by ``(v - lower) / (max - lower)``; ``lower`` is ``lower_bound`` (TMM)
    or the minimum of ``values`` (None), whichever is lower. All equal: every value becomes 1."""
    if not values:
        return []
    upper = max(values)
    lower = min(values) if lower_bound is None else min(lower_bound, min(values))
    span = upper - lower
    if not span > 0 or not math.isfinite(span):
        return [1.0 for _ in values]
    return [min(1.0, max(0.0, (value - lower) / span)) for value in values]


def _leg_values(items: Sequence[SearchDataItem], score_type: ScoreType) -> list[float]:
    """Raw scores of a leg in list order; an item without one counts as the list's weakest score."""
    raw = [item.score_of(score_type) for item in items]
    known = [value for value in raw if value is not None and math.isfinite(value)]
    floor = min(known) if known else 0.0
    return [value if value is not None and math.isfinite(value) else floor for value in raw]


def convex_combination(
    inputs: Sequence[ConvexInput],
    *,
    normalization: Normalization = DEFAULT_NORMALIZATION,
    stage: TraceStage = "convex",
) -> Iterator[SearchDataItem]:
    """Fuse the lists by ``sum(weight * normalised score)`` (see the module docstring for the rules); the
    fused items come one at a time, in fused order: every sum and rank is worked out at the first item,
    each item's fused score, trace entry and copy only when it is taken (a search that keeps ~35 of ~120
    fused items within its token budget makes ~35)."""
    legs = [leg for leg in inputs if leg.items]
    if not legs:
        return
    fused: dict[str, SearchDataItem] = {}
    sums: dict[str, float] = {}
    ranks: dict[str, list[float]] = {}
    # per item and leg: (leg, rank, raw value, normalised value), formatted only for the items taken
    parts: dict[str, list[tuple[int, int, float, float]]] = {}
    names = [leg.name or leg.score_type for leg in legs]
    for index, leg in enumerate(legs):
        items = [SearchDataItem.of(raw) for raw in leg.items]
        values = _leg_values(items, leg.score_type)
        lower = THEORETICAL_MIN.get(leg.score_type) if normalization == "tmm" else None
        scaled_values = _normalize_scores(values, lower)
        for rank, (item, value, scaled) in enumerate(zip(items, values, scaled_values, strict=True)):
            if item.id in ranks and ranks[item.id][index] < rank:
                continue  # an id repeated within one list counts at its best rank
            if item.id in fused:
                first = fused[item.id]
                known = first.trace.stages
                extra = [entry for entry in item.trace.stages if entry not in known]
                trace = first.trace.copy_with({"stages": [*known, *extra]})
                fused[item.id] = first.copy_with(
                    {"score": merge_scores(first.score, item.score), "trace": trace}
                )
            else:
                fused[item.id] = item
                sums[item.id] = 0.0
                ranks[item.id] = [math.inf] * len(legs)
            sums[item.id] += leg.weight * scaled
            ranks[item.id][index] = rank
            parts.setdefault(item.id, []).append((index, rank, value, scaled))

    weights = [f"{leg.weight:g}" for leg in legs]
    cap = sum(max(0.0, leg.weight) for leg in legs)
    cap = 1.0 if math.isclose(cap, 1.0) else cap  # w + (1 - w) may round above 1
    by_weight = sorted(range(len(legs)), key=lambda i: -legs[i].weight)  # stable: input order on ties
    order = sorted(fused, key=lambda data_id: (-sums[data_id], *(ranks[data_id][i] for i in by_weight)))
    for position, data_id in enumerate(order):
        item = fused[data_id]
        value = max(0.0, min(sums[data_id], cap))
        scores = [s for s in item.score if s.type != "rrf"]
        scores.append(SearchScore(type="rrf", value=value, index=position))
        missing = [names[i] for i, leg_rank in enumerate(ranks[data_id]) if leg_rank == math.inf]
        detail = " + ".join(
            f"{names[i]}#{rank + 1} {raw:.4g}→{scaled:.4f}×{weights[i]}"
            for i, rank, raw, scaled in parts[data_id]
        ) + "".join(f" + {name} missing→0" for name in missing)
        entry = TraceEntry(stage=stage, score=value, rank=position, detail=detail)
        yield item.traced(entry, scores=scores)
