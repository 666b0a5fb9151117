"""A search that shows no removed item (a workflow's search node: ``keep_cut`` False) makes its fused items
one at a time and stops at the token budget (``fuse_legs`` → ``deduped`` → ``similar_enough`` →
``filter_by_max_tokens``): the items, scores and traces must be those of the list-at-a-time stages, and
no fused item past the one crossing the budget may be made."""

from __future__ import annotations

from collections.abc import Iterator

from hypothesis import given, settings
from hypothesis import strategies as st

from fathom.knowledge.search.filters import (
    dedupe_results,
    deduped,
    filter_by_max_tokens,
    filter_by_similarity,
    similar_enough,
)
from fathom.knowledge.search.hybrid import fuse_legs
from fathom.knowledge.search.types import ScoreType, SearchDataItem, SearchScore, TraceEntry

TEXTS = ["bone fracture", "Bone, fracture!", "blood pressure", "vitamin D", "维生素 D", "exercise", ""]


def _leg(
    draws: list[tuple[int, int, float, int | None]], score_type: ScoreType, stage: str
) -> list[SearchDataItem]:
    """A recalled leg: ids may repeat within and across legs, texts collide (duplicates to dedupe)."""
    items = []
    for rank, (id_number, text, value, tokens) in enumerate(draws):
        item = SearchDataItem(id=f"d{id_number}", q=TEXTS[text], datasetId="ds", tokens=tokens)
        entry = TraceEntry(stage=stage, score=value, rank=rank)  # type: ignore[arg-type]
        items.append(item.traced(entry, scores=[SearchScore(type=score_type, value=value, index=rank)]))
    return items


draws = st.lists(
    st.tuples(
        st.integers(0, 30),
        st.integers(0, len(TEXTS) - 1),
        st.floats(-1, 30, allow_nan=False),
        st.none() | st.integers(0, 400),
    ),
    max_size=25,
)


class Counted:
    """An iterator that counts the items taken from it."""

    def __init__(self, items: Iterator[SearchDataItem]) -> None:
        self.items, self.taken = items, 0

    def __iter__(self) -> Iterator[SearchDataItem]:
        for item in self.items:
            self.taken += 1
            yield item


@settings(max_examples=300, deadline=None)
@given(
    embedding=draws,
    full_text=draws,
    weight=st.sampled_from([0.0, 0.3, 0.5, 1.0]),
    fusion=st.sampled_from(["convex", "rrf", None]),
    coverage=st.none() | st.floats(0, 1),
    similarity=st.none() | st.floats(-0.5, 1),
    score_type=st.sampled_from(["embedding", "rrf", None]),
    limit=st.integers(0, 1500),
)
def test_the_lazy_stages_keep_what_the_list_stages_keep_and_stop_at_the_budget(
    embedding: list[tuple[int, int, float, int | None]],
    full_text: list[tuple[int, int, float, int | None]],
    weight: float,
    fusion: str | None,
    coverage: float | None,
    similarity: float | None,
    score_type: ScoreType | None,
    limit: int,
) -> None:
    legs = _leg(embedding, "embedding", "embeddingRecall"), _leg(full_text, "fullText", "fullTextRecall")
    options = {"weight": weight, "fusion": fusion, "coverage": coverage}
    fused = list(fuse_legs(*legs, **options))  # type: ignore[arg-type]
    eager, cut = dedupe_results(fused, keep_cut=False)
    eager, cut = filter_by_similarity(eager, similarity, score_type, keep_cut=False)
    eager, cut = filter_by_max_tokens(eager, limit, len, keep_cut=False)

    made = Counted(fuse_legs(*legs, **options))  # type: ignore[arg-type]
    lazy, none = filter_by_max_tokens(
        similar_enough(deduped(made), similarity, score_type), limit, len, keep_cut=False
    )
    assert [item.model_dump(by_alias=True) for item in lazy] == [
        item.model_dump(by_alias=True) for item in eager
    ]
    assert cut == none == []
    spent = sum(item.tokens if item.tokens is not None else len(item.q + item.a) for item in eager)
    if spent > limit:  # made up to the item that crossed the budget, none after it
        last = eager[-1].model_dump(exclude={"trace"})
        crossing = next(i for i, item in enumerate(fused) if item.model_dump(exclude={"trace"}) == last)
        assert made.taken == crossing + 1
    else:  # the budget never filled: every fused item was looked at
        assert made.taken == len(fused)
