"""Splitting of blocks that must stay readable when cut: code, Markdown tables, HTML tables.

- Code: split by line, the opening fence (with its language) and the closing fence repeated on every
  piece; a single line longer than the room is cut by characters.
- Markdown tables: split by row, the header row and the ``| --- |`` separator repeated on every piece.
- HTML tables: split by ``<tr>``, the ``<thead>`` (or the first row) repeated on every piece.

Every function returns ``None`` when the block cannot be split this way — e.g. a row that does not
fit beside the repeated header — and the caller then splits it as prose; else pieces of at most
``limit`` non-whitespace characters.
"""

from __future__ import annotations

import re

from fathom.knowledge.text import valid_length

_TR = re.compile(r"<tr[\s>].*?</tr>", re.IGNORECASE | re.DOTALL)
_THEAD = re.compile(r"<thead[\s>].*?</thead>", re.IGNORECASE | re.DOTALL)
_TABLE_OPEN = re.compile(r"^\s*(<table[^>]*>)", re.IGNORECASE)
_TABLE_NOISE = re.compile(r"</?tbody[^>]*>|</table>", re.IGNORECASE)


def _cut_by_chars(text: str, room: int) -> list[str]:
    """Consecutive slices of ``text`` with at most ``room`` non-whitespace characters each."""
    pieces: list[str] = []
    start, count = 0, 0
    for i, ch in enumerate(text):
        if not ch.isspace():
            if count == room:
                pieces.append(text[start:i])
                start, count = i, 0
            count += 1
    pieces.append(text[start:])
    return pieces


def _pack_lines(lines: list[str], room: int, joiner: str = "\n") -> list[list[str]]:
    """Greedy packing of lines into groups of at most ``room`` valid characters (an over-long line
    is cut by characters first)."""
    groups: list[list[str]] = []
    current: list[str] = []
    size = 0
    for line in lines:
        parts = _cut_by_chars(line, room) if valid_length(line) > room else [line]
        for part in parts:
            part_size = valid_length(part)
            if current and size + part_size > room:
                groups.append(current)
                current, size = [], 0
            current.append(part)
            size += part_size
    if current:
        groups.append(current)
    return groups


def split_code_block(text: str, limit: int) -> list[str] | None:
    """Split a fenced code block by lines, repeating the fences (and language) on every piece."""
    lines = text.split("\n")
    opening = lines[0]
    marker = opening.strip()[0] * 3
    closed = len(lines) > 1 and lines[-1].strip().startswith(marker)
    closing = lines[-1] if closed else marker
    body = lines[1:-1] if closed else lines[1:]
    room = limit - valid_length(opening + closing)
    if room < 1:
        return None
    return [
        "\n".join([opening, *group, closing]) for group in _pack_lines(body, room) if "".join(group).strip()
    ] or [text]


def split_markdown_table(text: str, limit: int) -> list[str] | None:
    """Split a Markdown table by rows, repeating the header and separator rows on every piece."""
    lines = [line for line in text.split("\n") if line.strip()]
    if len(lines) < 2:
        return None
    header = f"{lines[0]}\n{lines[1]}"
    room = limit - valid_length(header)
    if room < 1:
        return None
    pieces: list[str] = []
    rows: list[str] = []
    size = 0
    if any(valid_length(row) > room for row in lines[2:]):
        return None  # a row that cannot fit beside the header: split the table as prose
    for row in lines[2:]:
        row_size = valid_length(row)
        if rows and size + row_size > room:
            pieces.append("\n".join([header, *rows]))
            rows, size = [], 0
        rows.append(row)
        size += row_size
    if rows or not pieces:
        pieces.append("\n".join([header, *rows]))
    return pieces


def split_html_table(text: str, limit: int) -> list[str] | None:
    """Split an HTML table by ``<tr>``, repeating ``<thead>`` (or the first row) on every piece."""
    opening = _TABLE_OPEN.match(text)
    if opening is None:
        return None
    thead = _THEAD.search(text)
    rest = text[opening.end() :]
    if thead:
        rest = rest.replace(thead.group(0), "", 1)
    rows = _TR.findall(rest)
    residue = _TABLE_NOISE.sub("", _TR.sub("", rest))
    if residue.strip() or not rows:
        return None  # captions or stray text: do not risk dropping them
    open_tag = opening.group(1)
    if thead:
        head = f"{open_tag}\n{thead.group(0)}\n<tbody>"
    else:
        head, rows = f"{open_tag}\n<tbody>\n{rows[0]}", rows[1:]
    tail = "</tbody>\n</table>"
    room = limit - valid_length(head + tail)
    if room < 1:
        return None
    pieces: list[str] = []
    current: list[str] = []
    size = 0
    if any(valid_length(row) > room for row in rows):
        return None  # a row that cannot fit beside the header: split the table as prose
    for row in rows:
        row_size = valid_length(row)
        if current and size + row_size > room:
            pieces.append("\n".join([head, *current, tail]))
            current, size = [], 0
        current.append(row)
        size += row_size
    if current or not pieces:
        pieces.append("\n".join([head, *current, tail]))
    return pieces
