"""Prose splitting down FastGPT's separator ladder, with sentence-level overlap.

Ladder (coarsest first): line breaks; sentence ends ``。`` or a letter followed by ``. ``; ``！``/``! ``;
``？``/``? ``; ``；``/``; ``; ``，``/``, ``; then fixed slices. A piece never exceeds the budget (in
non-whitespace characters). Overlap is only taken at the punctuation levels and from fixed slices —
whole sentences (units) copied from the end of the previous piece, between ``overlap_len`` and
``max_overlap_len`` characters — never at the line level, so it never crosses a paragraph, a heading or
an incomplete sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fathom.knowledge.text import valid_length

# Each level's pattern matches the end of a unit (the separator stays with the text before it).
LADDER: tuple[re.Pattern[str], ...] = (
    re.compile(r"\n"),
    re.compile(r"。|(?<=[A-Za-z])\.(?=\s)"),
    re.compile(r"！|!(?=\s)"),
    re.compile(r"？|\?(?=\s)"),
    re.compile(r"；|;(?=\s)"),
    re.compile(r"，|,(?=\s)"),
)
FIRST_OVERLAP_LEVEL = 1  # levels below this (line breaks) never overlap


@dataclass(frozen=True)
class Span:
    """A piece of the input: ``text[start:end]``; ``text[start:body_start]`` repeats the previous piece."""

    start: int
    end: int
    body_start: int


def _units(text: str, pattern: re.Pattern[str]) -> list[tuple[int, int]]:
    """Partition ``text`` into consecutive (start, end) units cut after each separator match."""
    cuts = [m.end() for m in pattern.finditer(text)]
    units: list[tuple[int, int]] = []
    start = 0
    for cut in [*cuts, len(text)]:
        if cut <= start:
            continue
        if units and not text[start:cut].strip():
            units[-1] = (units[-1][0], cut)  # whitespace-only unit: glue to the previous one
        else:
            units.append((start, cut))
        start = cut
    return units


def _fixed_slices(text: str, budget: int, overlap_len: int) -> list[Span]:
    """Cut ``text`` into slices of at most ``budget`` non-whitespace characters, overlapping by
    ``overlap_len`` of them (the last resort, FastGPT's slice step ``chunkSize - overlapLen``)."""
    positions = [i for i, ch in enumerate(text) if not ch.isspace()]
    if not positions:
        return [Span(0, len(text), 0)]
    step = budget - overlap_len if budget - overlap_len > 0 else budget
    spans: list[Span] = []
    first = 0
    prev_end_valid = 0
    while True:
        last = min(first + budget, len(positions))
        start = 0 if first == 0 else positions[first]
        end = len(text) if last == len(positions) else positions[last]
        body_valid = max(prev_end_valid, first)
        body_start = start if body_valid <= first or body_valid >= len(positions) else positions[body_valid]
        spans.append(Span(start, end, body_start))
        if last == len(positions):
            return spans
        prev_end_valid = last
        first += step


def split_prose(
    text: str, budget: int, overlap_len: int, max_overlap_len: float, level: int = 0
) -> list[Span]:
    """Split ``text`` into spans of at most ``budget`` valid characters, in order, covering it all."""
    if valid_length(text) <= budget:
        return [Span(0, len(text), 0)]
    if level >= len(LADDER):
        return _fixed_slices(text, budget, overlap_len)
    units = _units(text, LADDER[level])
    if len(units) <= 1:
        return split_prose(text, budget, overlap_len, max_overlap_len, level + 1)

    use_overlap = level >= FIRST_OVERLAP_LEVEL and overlap_len > 0
    spans: list[Span] = []
    current: list[tuple[int, int]] = []  # units of the open piece
    body_start = 0
    current_len = 0

    def emit() -> None:
        if current and current[-1][1] > body_start:
            spans.append(Span(current[0][0], current[-1][1], body_start))

    for unit_start, unit_end in units:
        unit_len = valid_length(text[unit_start:unit_end])
        if unit_len > budget:
            emit()
            inner = split_prose(text[unit_start:unit_end], budget, overlap_len, max_overlap_len, level + 1)
            spans.extend(
                Span(s.start + unit_start, s.end + unit_start, s.body_start + unit_start) for s in inner
            )
            current, current_len, body_start = [], 0, unit_end
            continue
        if current and current_len + unit_len > budget:
            emit()
            overlap = _overlap_units(text, current, overlap_len, max_overlap_len) if use_overlap else []
            overlap_size = sum(valid_length(text[s:e]) for s, e in overlap)
            if overlap and overlap_size + unit_len <= budget:
                current, current_len = overlap, overlap_size
            else:
                current, current_len = [], 0
            body_start = unit_start
        if not current:
            body_start = unit_start
        current.append((unit_start, unit_end))
        current_len += unit_len
    emit()
    return spans


def _overlap_units(
    text: str, units: list[tuple[int, int]], overlap_len: int, max_overlap_len: float
) -> list[tuple[int, int]]:
    """Trailing whole units of a piece whose size first exceeds ``overlap_len`` (at most
    ``max_overlap_len``); never the whole piece."""
    taken: list[tuple[int, int]] = []
    size = 0
    for unit in reversed(units[1:]):
        unit_size = valid_length(text[unit[0] : unit[1]])
        if size + unit_size > overlap_len:
            if size + unit_size > max_overlap_len:
                return list(reversed(taken))
            taken.append(unit)
            return list(reversed(taken))
        taken.append(unit)
        size += unit_size
    return list(reversed(taken))
