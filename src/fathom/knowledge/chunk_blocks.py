"""Markdown structure for the splitter: heading sections and their blocks.

A document is read line by line into sections (the heading path above the text, up to
``paragraph_chunk_deep`` levels) holding blocks: prose paragraphs, fenced code, Markdown tables and
HTML tables. Code fences are recognised first, so a ``#`` inside code is never a heading.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

BlockKind = Literal["text", "code", "table", "html_table"]

_FENCE = re.compile(r"^[ ]{0,3}(`{3,}|~{3,})(.*)$")
_TABLE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
_HTML_TABLE_OPEN = re.compile(r"^\s*<table[\s>]", re.IGNORECASE)
_HTML_TABLE_CLOSE = re.compile(r"</table>", re.IGNORECASE)


@dataclass(frozen=True)
class Block:
    """One structural unit of a section's body."""

    kind: BlockKind
    text: str


@dataclass
class Section:
    """The heading lines above a stretch of text (outermost first) and the text's blocks."""

    headings: tuple[str, ...]
    blocks: list[Block] = field(default_factory=list)
    heading_ids: tuple[int, ...] = ()  # line number of each heading: tells equal titles apart


def _heading_level(line: str, max_depth: int) -> int:
    """Markdown ATX heading level of ``line`` (1..max_depth), or 0 when it is not such a heading."""
    if max_depth <= 0 or not line.startswith("#"):
        return 0
    level = len(line) - len(line.lstrip("#"))
    if level > max_depth or level > 8:
        return 0
    rest = line[level:]
    if not rest or rest[0] not in " \t" or not rest.strip():
        return 0
    return level


def _is_table_start(lines: list[str], i: int) -> bool:
    if i + 1 >= len(lines):
        return False
    head, sep = lines[i].strip(), lines[i + 1]
    return head.startswith("|") and "|" in sep and _TABLE_SEPARATOR.match(sep) is not None


def parse_sections(text: str, max_depth: int) -> list[Section]:
    """Split normalised ``text`` into heading sections with typed blocks, in document order.

    A heading with no text of its own becomes a heading-only section unless a deeper heading follows
    (then it lives on as the parent in its children's heading path).
    """
    lines = text.split("\n")
    sections: list[Section] = []
    path: list[tuple[int, str, int]] = []
    blocks: list[Block] = []
    paragraph: list[str] = []

    def flush_paragraph() -> None:
        if paragraph:
            blocks.append(Block("text", "\n".join(paragraph)))
            paragraph.clear()

    def close_section(next_level: int) -> None:
        flush_paragraph()
        headings = tuple(h for _, h, _ in path)
        ids = tuple(n for _, _, n in path)
        if blocks:
            sections.append(Section(headings, list(blocks), ids))
        elif path and next_level <= path[-1][0]:
            sections.append(Section(headings, [], ids))
        blocks.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            flush_paragraph()
            marker = fence.group(1)
            end = i + 1
            while end < len(lines):
                closing = lines[end].strip()
                if closing.startswith(marker[0] * 3) and set(closing) <= {marker[0]}:
                    break
                end += 1
            blocks.append(Block("code", "\n".join(lines[i : end + 1])))
            i = end + 1
            continue
        level = _heading_level(line, max_depth)
        if level:
            close_section(level)
            while path and path[-1][0] >= level:
                path.pop()
            path.append((level, line.strip(), i))
            i += 1
            continue
        if _is_table_start(lines, i):
            flush_paragraph()
            end = i + 2
            while end < len(lines) and lines[end].strip().startswith("|"):
                end += 1
            blocks.append(Block("table", "\n".join(lines[i:end])))
            i = end
            continue
        if _HTML_TABLE_OPEN.match(line):
            end = i
            while end < len(lines) and not _HTML_TABLE_CLOSE.search(lines[end]):
                end += 1
            if end < len(lines) and lines[end].strip().lower().endswith("</table>"):
                flush_paragraph()
                blocks.append(Block("html_table", "\n".join(lines[i : end + 1])))
                i = end + 1
                continue
        if line.strip():
            paragraph.append(line)
        else:
            flush_paragraph()
        i += 1
    close_section(0)
    return sections
