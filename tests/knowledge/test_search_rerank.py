"""Rerank stage (spec §5.5): fusion by rerankWeight, fallback on failure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fathom.knowledge.ports import Reranker
from fathom.knowledge.search import SearchDataItem, rerank_search_results


class OverlapReranker:
    """A real (if simple) reranker: fraction of query words present in the document."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []

    async def rerank(self, query: str, documents: Sequence[str]) -> list[tuple[int, float]]:
        self.calls.append((query, list(documents)))
        words = set(query.lower().split())
        scored = [(i, len(words & set(d.lower().split())) / len(words)) for i, d in enumerate(documents)]
        return sorted(scored, key=lambda pair: -pair[1])


class BrokenReranker:
    async def rerank(self, query: str, documents: Sequence[str]) -> list[tuple[int, float]]:
        raise ConnectionError("rerank endpoint down")


class EmptyReranker:
    async def rerank(self, query: str, documents: Sequence[str]) -> list[tuple[int, float]]:
        return []


@dataclass
class _Hit:
    index: int
    relevance_score: float


@dataclass
class _Result:
    hits: list[_Hit]
    input_tokens: int


class ResultObjectReranker:
    """Returns the ``fathom.llm.RerankResult`` shape (hits + input_tokens)."""

    async def rerank(self, query: str, documents: Sequence[str]) -> _Result:
        return _Result([_Hit(1, 0.9), _Hit(0, 0.1)], input_tokens=42)


def _items() -> list[SearchDataItem]:
    texts = [("apples are red", ""), ("bananas are yellow", "tropical fruit"), ("red apples and pears", "")]
    return [
        SearchDataItem.of(
            {"id": str(i), "q": q, "a": a, "score": [{"type": "embedding", "value": 0.5, "index": i}]}
        )
        for i, (q, a) in enumerate(texts)
    ]


def _count(text: str) -> int:
    return len(text.split())


def test_overlap_reranker_is_a_reranker() -> None:
    assert isinstance(OverlapReranker(), Reranker)


async def test_rerank_weight_one_keeps_the_rerank_list_only() -> None:
    reranker = OverlapReranker()
    outcome = await rerank_search_results(_items(), "yellow bananas", reranker, 1, _count)
    assert outcome.using_re_rank
    assert [i.id for i in outcome.items] == ["1", "0", "2"]
    assert [s.type for s in outcome.items[0].score] == ["reRank"]
    assert outcome.items[0].score[0].index == 0
    assert reranker.calls[0][1][1] == "bananas are yellow\ntropical fruit"
    assert outcome.input_tokens == _count("yellow bananas") + sum(_count(d) for d in reranker.calls[0][1])


async def test_rerank_weight_half_fuses_recall_and_rerank_by_rrf() -> None:
    outcome = await rerank_search_results(_items(), "yellow bananas", OverlapReranker(), 0.5, _count)
    first = outcome.items[0]
    # recall ranks 0,1,2; rerank ranks 1,0,2 -> "0" and "1" tie, first appearance ("0") wins
    assert [i.id for i in outcome.items] == ["0", "1", "2"]
    assert {s.type for s in first.score} == {"embedding", "reRank", "rrf"}
    assert first.trace.stages[-1].stage == "reRankFusion"


async def test_rerank_failure_falls_back_to_recall_order() -> None:
    items = _items()
    outcome = await rerank_search_results(items, "q", BrokenReranker(), 0.5, _count)
    assert (outcome.using_re_rank, outcome.input_tokens) == (False, 0)
    assert outcome.items == items
    assert outcome.error == "rerank endpoint down"


async def test_empty_rerank_answer_is_an_error_and_falls_back() -> None:
    outcome = await rerank_search_results(_items(), "q", EmptyReranker(), 0.5, _count)
    assert not outcome.using_re_rank
    assert outcome.error == "Rerank error"


async def test_rerank_result_objects_are_accepted_with_reported_tokens() -> None:
    outcome = await rerank_search_results(_items()[:2], "q", ResultObjectReranker(), 1, _count)
    assert [i.id for i in outcome.items] == ["1", "0"]
    assert outcome.input_tokens == 42
