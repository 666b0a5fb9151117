"""The search's dedupe stage on real text: CPU per search, the rule applied character by character
(the code before 2026-12-06) against ``dedupe_results`` (ASCII first keys, full keys only within a group).

    .venv/bin/python benchmarks/search_dedupe.py [--items 60] [--searches 33] [--rounds 5]

Items: SciFact abstracts (``../shared/datasets/scifact``, title + the first 900 characters, as a chunk),
``--items`` per search, and the same from CMRC 2018's Chinese passages
(``../shared/datasets/cmrc2018-retrieval``), where every text is non-ASCII; a tenth of each search's
items again under other ids (duplicates to cut). The two contenders run alternately round by round in this
process; CPU is ``time.process_time``; the report gives each round's figures and min / median / max of the
ratios. Both must keep and cut the same items (checked for every search before timing).
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import time
import unicodedata
from collections.abc import Callable, Sequence
from pathlib import Path

from fathom.knowledge.search import SearchDataItem, dedupe_results

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


_ASCII_NOT_ALNUM = bytes(b for b in range(128) if not chr(b).isalnum())


def _letters_and_digits_before(text: str) -> str:
    """``letters_and_digits`` before 2026-12-06: ASCII texts translated, others a lookup per character."""
    if text.isascii():
        return text.encode("ascii").translate(None, _ASCII_NOT_ALNUM).decode("ascii")
    return "".join(ch for ch in text if unicodedata.category(ch)[0] in "LN")


def by_character(items: Sequence[SearchDataItem]) -> tuple[list[str], list[str]]:
    """The dedupe stage as it was: every item's full key (a category lookup per character of a non-ASCII
    text)."""
    seen: set[tuple[str, str]] = set()
    kept: list[str] = []
    cut: list[str] = []
    for item in items:
        key = _letters_and_digits_before(item.q + (item.a or "")), item.image_id or ""
        (cut if key in seen else kept).append(item.id)
        seen.add(key)
    return kept, cut


def grouped(items: Sequence[SearchDataItem]) -> tuple[list[str], list[str]]:
    kept, cut = dedupe_results(items)
    return [item.id for item in kept], [item.id for item in cut]


def scifact(count: int) -> list[str]:
    with (SHARED / "scifact" / "corpus.jsonl").open() as lines:
        rows = [json.loads(line) for line in itertools.islice(lines, count)]
    return [f"{row['title']}\n{row['text'][:900]}" for row in rows]


def chinese(count: int) -> list[str]:
    path = SHARED / "cmrc2018-retrieval" / "corpus.jsonl"
    if not path.exists():
        return []
    with path.open() as lines:
        rows = [json.loads(line) for line in itertools.islice(lines, count)]
    return [f"{row['title']}\n{row['text'][:900]}" for row in rows]


def searches(texts: list[str], items: int, count: int) -> list[list[SearchDataItem]]:
    """``count`` searches of ``items`` distinct texts, then a tenth of them again under other ids (the
    same chunk text stored twice, as two collections of one document give)."""
    made = [SearchDataItem.of({"id": str(n), "q": q, "a": "", "score": []}) for n, q in enumerate(texts)]
    batches = []
    for n in range(count):
        batch = made[n * items : (n + 1) * items]
        again = [item.model_copy(update={"id": f"{item.id}-again"}) for item in batch[: items // 10]]
        batches.append(batch + again)
    return batches


def run(name: str, batches: list[list[SearchDataItem]], rounds: int) -> None:
    contenders: list[tuple[str, Callable[[Sequence[SearchDataItem]], tuple[list[str], list[str]]]]] = [
        ("by character", by_character),
        ("grouped", grouped),
    ]
    for batch in batches:
        assert by_character(batch) == grouped(batch), "the two must keep and cut the same items"
    cpu: dict[str, list[float]] = {label: [] for label, _ in contenders}
    for number in range(rounds):
        order = contenders if number % 2 == 0 else contenders[::-1]
        for label, dedupe in order:
            started = time.process_time()
            for batch in batches:
                dedupe(batch)
            cpu[label].append(1000 * (time.process_time() - started) / len(batches))
    ratios = sorted(a / b for a, b in zip(cpu["by character"], cpu["grouped"], strict=True))
    share = sum(not item.q.isascii() for batch in batches for item in batch) / sum(map(len, batches))
    print(f"\n{name}: {len(batches)} searches of {len(batches[0])} items, {share:.0%} of the items non-ASCII")
    for label, values in cpu.items():
        print(f"  {label:13} ms CPU per search, per round: {' / '.join(f'{v:.3f}' for v in values)}")
    print(
        f"  by character / grouped: min {ratios[0]:.1f} median {statistics.median(ratios):.1f} "
        f"max {ratios[-1]:.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=60, help="items per search (mixedRecall pools 80 + 60)")
    parser.add_argument("--searches", type=int, default=33)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    run("SciFact", searches(scifact(args.items * args.searches), args.items, args.searches), args.rounds)
    texts = chinese(args.items * args.searches)
    if texts:
        run("Chinese", searches(texts, args.items, args.searches), args.rounds)
    else:
        print("\nChinese: no ../shared/datasets/cmrc2018-retrieval (skipped)")


if __name__ == "__main__":
    main()
