"""Recall limits and the post-fusion filters (spec §5.3.3, §5.6), as pure functions.

Every filter returns ``(kept, cut)``: the kept items carry a trace entry of the stage, the cut ones
also carry ``trace.cutBy``. ``deduped`` and ``similar_enough`` are the first two for a search that shows
no removed item, item by item: with them and the budget, such a search stops reading the fused items at
its token limit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence

from fathom.knowledge.search.types import SEARCH_MODES, ScoreType, SearchDataItem, SearchMode, TraceEntry
from fathom.knowledge.text import ascii_letters_and_digits, letters_and_digits

TokenCounter = Callable[[str], int]
FilterResult = tuple[list[SearchDataItem], list[SearchDataItem]]


def normalize_search_mode(mode: str | None) -> SearchMode:
    """An unknown search mode falls back to ``embedding`` (spec §5.3.1)."""
    for known in SEARCH_MODES:
        if mode == known:
            return known
    return "embedding"


def count_recall_limit(mode: str | None) -> tuple[int, int]:
    """Candidate pool sizes ``(embedding, fullText)``: 100/0, 0/100, mixed 80/60."""
    search_mode = normalize_search_mode(mode)
    if search_mode == "fullTextRecall":
        return 0, 100
    if search_mode == "mixedRecall":
        return 80, 60
    return 100, 0


def _dedupe_parts(item: SearchDataItem) -> tuple[str, str]:
    """What two items must share to be duplicates: ``q + a`` letters and digits, and the image id."""
    return letters_and_digits(item.q + (item.a or "")), item.image_id or ""


class _Kept:
    """A kept item whose full dedupe key is worked out only when another item shares its first key."""

    __slots__ = ("item", "_key")

    def __init__(self, item: SearchDataItem) -> None:
        self.item = item
        self._key: tuple[str, str] | None = None

    def key(self) -> tuple[str, str]:
        if self._key is None:
            self._key = _dedupe_parts(self.item)
        return self._key


def _dedupe_verdicts(
    items: Iterable[SearchDataItem],
) -> Iterator[tuple[SearchDataItem, SearchDataItem | None]]:
    """Each item with the earlier item it duplicates (None: kept), in order, deciding one item at a time
    (a consumer that stops early leaves the rest unread).

    Items are grouped first by a cheap key (the ASCII letters and digits of ``q + a``, and the image id),
    which equal dedupe keys share; the full key (every Unicode letter and digit) is worked out only within
    a group of two or more. Most items are in no such group: a search's ~60 items cost ~5 µs each instead
    of ~250 µs for a text with any non-ASCII character."""
    groups: dict[tuple[bytes, str], list[_Kept]] = {}
    for item in items:
        first = ascii_letters_and_digits(item.q + (item.a or "")), item.image_id or ""
        group = groups.get(first)
        if group is None:
            groups[first] = [_Kept(item)]
            yield item, None
            continue
        key = _dedupe_parts(item)
        same = next((earlier for earlier in group if earlier.key() == key), None)
        if same is not None:
            yield item, same.item
            continue
        group.append(_Kept(item))
        yield item, None


def deduped(items: Iterable[SearchDataItem]) -> Iterator[SearchDataItem]:
    """The first item of each dedupe key, lazily, untraced (``dedupe_results`` with ``keep_cut`` False)."""
    return (item for item, same in _dedupe_verdicts(items) if same is None)


def dedupe_results(items: Iterable[SearchDataItem], *, keep_cut: bool = True) -> FilterResult:
    """Keep the first item of each dedupe key (distinct images never collapse); ``keep_cut`` False: the
    duplicates are not traced and not returned."""
    if not keep_cut:
        return list(deduped(items)), []
    kept: list[SearchDataItem] = []
    cut: list[SearchDataItem] = []
    for item, same in _dedupe_verdicts(items):
        if same is None:
            kept.append(item)
        else:
            entry = TraceEntry(stage="dedupe", passed=False, detail=f"same text as {same.id}")
            cut.append(item.traced(entry, cut=True))
    return kept, cut


def similarity_score_type(search_mode: str | None, using_re_rank: bool) -> ScoreType | None:
    """The score type the similarity threshold applies to: ``reRank`` when rerank was used; else
    ``embedding`` in embedding mode only; otherwise none (no filter)."""
    if using_re_rank:
        return "reRank"
    if normalize_search_mode(search_mode) == "embedding":
        return "embedding"
    return None


def _similarity_verdicts(
    items: Iterable[SearchDataItem], similarity: float, score_type: ScoreType, keep_cut: bool
) -> Iterator[tuple[SearchDataItem, bool]]:
    """Each item traced with its verdict, and whether it passed; without ``keep_cut`` the items below the
    threshold are skipped untraced. Lazy: one item at a time."""
    for item in items:
        value = item.score_of(score_type)
        if value is None:
            yield item.traced(TraceEntry(stage="similarity", detail=f"no {score_type} score")), True
            continue
        passed = value >= similarity
        if not passed and not keep_cut:
            continue
        entry = TraceEntry(
            stage="similarity", score=value, passed=passed, detail=f"{score_type} >= {similarity:g}"
        )
        yield item.traced(entry, cut=not passed), passed


def similar_enough(
    items: Iterable[SearchDataItem], similarity: float | None, score_type: ScoreType | None
) -> Iterator[SearchDataItem]:
    """The items ``filter_by_similarity`` keeps (``keep_cut`` False), lazily."""
    if similarity is None or score_type is None:
        return iter(items)
    return (item for item, _ in _similarity_verdicts(items, similarity, score_type, False))


def filter_by_similarity(
    items: Iterable[SearchDataItem],
    similarity: float | None,
    score_type: ScoreType | None,
    *,
    keep_cut: bool = True,
) -> FilterResult:
    """Keep items whose ``score_type`` value is >= ``similarity``; items without that score type are
    kept. ``similarity`` 0 is a real threshold (negative scores are cut); ``None`` disables the filter.
    ``keep_cut`` False: the items below the threshold are not traced and not returned."""
    if similarity is None or score_type is None:
        return list(items), []
    kept: list[SearchDataItem] = []
    cut: list[SearchDataItem] = []
    for item, passed in _similarity_verdicts(items, similarity, score_type, keep_cut):
        (kept if passed else cut).append(item)
    return kept, cut


def _item_tokens(item: SearchDataItem, count_tokens: TokenCounter) -> int:
    """The chunk's stored token count when the store has one (counted with cl100k when it was written),
    else ``count_tokens(q + a)`` now."""
    return item.tokens if item.tokens is not None else count_tokens(item.q + (item.a or ""))


def filter_by_max_tokens(
    items: Iterable[SearchDataItem], max_tokens: int, count_tokens: TokenCounter, *, keep_cut: bool = True
) -> FilterResult:
    """Search budget (``filterDatasetDataByMaxTokens``): walk in order, include each item and add its
    tokens (``q + a``); stop once the total exceeds ``max_tokens`` (the crossing item is included).
    ``keep_cut`` False: the items over the budget are not traced and not returned (a caller showing none),
    and ``items`` may be an iterator, read no further than the crossing item."""
    kept: list[SearchDataItem] = []
    total = 0
    walked = iter(items)
    for i, item in enumerate(walked):
        total += _item_tokens(item, count_tokens)
        kept.append(item.traced(TraceEntry(stage="tokenBudget", score=float(total), rank=i)))
        if total > max_tokens:
            break
    if not keep_cut:
        return kept, []
    over = TraceEntry(stage="tokenBudget", passed=False, detail=f"over {max_tokens} tokens")  # one for all
    return kept, [item.traced(over, cut=True) for item in walked]


def filter_search_results_by_max_chars(
    items: Sequence[SearchDataItem], max_tokens: int, count_tokens: TokenCounter, *, trace: bool = True
) -> FilterResult:
    """Workflow budget (``filterSearchResultsByMaxChars``): an item that would push the total past
    ``max_tokens + 500`` is left out and the walk stops; otherwise the item is included and the walk
    stops once the total exceeds ``max_tokens``. Nothing included: the first item only. ``trace`` False:
    the kept items as they came (no ``tokenBudget`` entry) and no cut list, for a caller that shows
    neither (the AI chat node, whose quote list leaves the traces out)."""
    kept: list[SearchDataItem] = []
    total = 0
    stopped_at = len(items)
    for i, item in enumerate(items):
        total += _item_tokens(item, count_tokens)
        if total > max_tokens + 500:
            stopped_at = i
            break
        if not trace:
            kept.append(item)
        else:
            kept.append(item.traced(TraceEntry(stage="tokenBudget", score=float(total), rank=i)))
        if total > max_tokens:
            stopped_at = i + 1
            break
    if not kept and items:
        first = TraceEntry(stage="tokenBudget", rank=0, detail="first item always kept")
        kept = [items[0].traced(first) if trace else items[0]]
        stopped_at = 1
    if not trace:
        return kept, []
    over = TraceEntry(stage="tokenBudget", passed=False, detail=f"over {max_tokens} tokens")  # one for all
    cut = [item.traced(over, cut=True) for item in items[stopped_at:]]
    return kept, cut
