"""How ``mixedRecall`` weighs and fuses its two legs: the fusion a request gets, and how much of the query
the embedding model can read.

**Coverage.** An embedding model only sees the word pieces its vocabulary has: the default local model
(all-MiniLM, English) turns about 69% of Chinese characters into ``[UNK]``, so the vector of a Chinese
query is mostly noise while full text (jieba segmentation) finds the right paragraph. An embedder that can
say so exposes ``token_coverage(texts) -> list[float]``: per text, the share of its non-space characters
that are not inside an unknown token (``fathom.llm.local_embedding.LocalEmbedder`` does). The query's
coverage ``c`` (mean over the queries) scales the embedding leg's weight:

    embedding weight = w * c ** COVERAGE_EXPONENT,   full-text weight = 1 - embedding weight

An English query has ``c = 1`` (every SciFact claim does), so nothing changes; a Chinese query to MiniLM
(``c`` about 0.36 on CMRC) leaves the embedding leg about 6% of the weight (``0.5 * 0.36 ** 2``), enough
to reorder near-ties of the full-text leg but not to override it. An embedder without ``token_coverage``
(API models, the multilingual E5 model, whose SentencePiece vocabulary covers every script) is trusted
fully. A request that switched a leg off (``embeddingWeight`` 0 or 1) is left as it is. The exponent was
chosen on CMRC dev and SciFact train (``docs/benchmarks.md``, "Hybrid fusion by default").

**Fusion.** ``fusion: "rrf"`` is FastGPT's weighted RRF with the request's weights exactly, no coverage
scaling: a client that names it gets FastGPT's formula. ``fusion: "convex"`` and a request without
``fusion`` (every FastGPT client) get ``DEFAULT_FUSION`` with coverage-scaled weights. When only one leg
is left (a single-leg search mode, a leg that recalled nothing, a weight of 0 or 1), it is returned
unchanged, as RRF does, except under an explicit ``fusion: "convex"``, which scores even one list.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from fathom.knowledge.search.fusion import ConvexInput, Normalization, convex_combination
from fathom.knowledge.search.rrf import RrfInput, dataset_search_result_concat
from fathom.knowledge.search.types import SearchDataItem

Fusion = Literal["rrf", "convex"]
FUSIONS: tuple[Fusion, ...] = ("rrf", "convex")
# what a request without ``fusion`` gets (chosen on SciFact train and CMRC dev)
DEFAULT_FUSION: Fusion = "convex"
# the embedding weight is scaled by coverage ** COVERAGE_EXPONENT (chosen on CMRC dev: 0.9772 at 0.5)
COVERAGE_EXPONENT = 2.0


@dataclass(frozen=True)
class FusionPlan:
    """What a request's fusion resolves to: the formula, and whether coverage scales the weights."""

    fusion: Fusion
    coverage_aware: bool


def _resolve_fusion(requested: str | None) -> FusionPlan:
    """``"rrf"``: FastGPT's formula as sent; ``"convex"``: convex, coverage-aware; anything else (absent,
    empty, unknown): ``DEFAULT_FUSION``, coverage-aware."""
    if requested == "rrf":
        return FusionPlan("rrf", coverage_aware=False)
    if requested == "convex":
        return FusionPlan("convex", coverage_aware=True)
    return FusionPlan(DEFAULT_FUSION, coverage_aware=True)


def query_coverage(embedder: Any, queries: Sequence[str]) -> float | None:
    """Mean share of the queries' characters the embedder's vocabulary covers, or None when the embedder
    cannot tell (no ``token_coverage``) or there are no queries."""
    measure = getattr(embedder, "token_coverage", None)
    if not callable(measure) or not queries:
        return None
    values = [float(v) for v in measure(list(queries))]
    known = [min(1.0, max(0.0, v)) for v in values if math.isfinite(v)]
    return statistics.fmean(known) if known else None


def _leg_weights(
    weight: float, coverage: float | None, exponent: float = COVERAGE_EXPONENT
) -> tuple[float, float]:
    """``(embedding, fullText)`` weights for ``embeddingWeight`` ``weight`` and the query's coverage.

    Without a coverage, or with a leg switched off (``weight`` <= 0 or >= 1), ``(weight, 1 - weight)``.
    Otherwise the embedding weight is ``weight * coverage ** exponent`` (``exponent`` 0: unscaled; inf: any
    unknown character drops the leg) and the full-text leg gets the rest."""
    if coverage is None or not 0 < weight < 1:
        return weight, 1 - weight
    covered = min(1.0, max(0.0, coverage))
    factor = 1.0 if covered >= 1 else covered**exponent if math.isfinite(exponent) else 0.0
    embedding = weight * factor
    return embedding, 1 - embedding


def fuse_legs(
    embedding_items: Sequence[SearchDataItem],
    full_text_items: Sequence[SearchDataItem],
    *,
    weight: float,
    fusion: str | None,
    normalization: str = "minmax",
    coverage: float | None = None,
    exponent: float = COVERAGE_EXPONENT,
    plan: FusionPlan | None = None,
) -> Iterator[SearchDataItem]:
    """The mixedRecall fusion of the two recalled legs (see the module docstring); legs whose weight is
    <= 0 are dropped. With scaled weights, each fused item's trace entry says why. ``plan`` overrides what
    ``fusion`` resolves to (the tuning sweep measures coverage-aware RRF with it). The fused items come one
    at a time, in fused order (a convex fusion makes each only when it is taken: see
    ``fusion.convex_combination``)."""
    plan = plan or _resolve_fusion(fusion)
    embedding_weight, full_text_weight = (
        _leg_weights(weight, coverage, exponent) if plan.coverage_aware else (weight, 1 - weight)
    )
    active = [
        items
        for w, items in ((embedding_weight, embedding_items), (full_text_weight, full_text_items))
        if w > 0 and items
    ]
    if len(active) < 2 and not (fusion == "convex" and plan.fusion == "convex"):
        # one leg (a single-leg mode, an empty leg, a weight of 0 or 1) is returned unchanged, as RRF does
        return (SearchDataItem.of(item) for item in active[0]) if active else iter(())
    results: Iterable[SearchDataItem]
    if plan.fusion == "convex":
        norm: Normalization = "tmm" if normalization == "tmm" else "minmax"
        inputs = [
            ConvexInput(embedding_weight, embedding_items, "embedding", "embedding"),
            ConvexInput(full_text_weight, full_text_items, "fullText", "fullText"),
        ]
        results = convex_combination([leg for leg in inputs if leg.weight > 0], normalization=norm)
    else:
        results = dataset_search_result_concat(
            [
                leg
                for leg in (
                    RrfInput(weight=embedding_weight, items=embedding_items, name="embedding"),
                    RrfInput(weight=full_text_weight, items=full_text_items, name="fullText"),
                )
                if leg.weight > 0
            ]
        )
    if embedding_weight == weight or coverage is None or len(active) < 2:
        return iter(results)
    note = (
        f"embeddingWeight {weight:g}→{embedding_weight:.4g}: the embedding model reads "
        f"{coverage:.0%} of the query"
    )
    return (_noted(item, note) for item in results)


def _noted(item: SearchDataItem, note: str) -> SearchDataItem:
    """The item with ``note`` added to its last trace entry, the fusion's."""
    stages = item.trace.stages
    last = stages[-1]
    detail = f"{last.detail} ({note})" if last.detail else note
    trace = item.trace.copy_with({"stages": [*stages[:-1], last.copy_with({"detail": detail})]})
    return item.copy_with({"trace": trace})
