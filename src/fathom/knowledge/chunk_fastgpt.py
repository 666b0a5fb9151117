"""FastGPT's own splitter rule (``splitText2Chunks``), selected by ``SplitOptions(rule="fastgpt")``.

Fathom's splitter (``fathom.knowledge.chunk``) reads Markdown into sections and blocks and bounds every
chunk; this module follows FastGPT's recursive algorithm instead, step for step, so a collection can be
cut exactly as FastGPT cuts it (its ``textSplitter.test.ts`` cases are restated in
``tests/fastgpt_conformance/``). The rules, as FastGPT has them:

1. ``CUSTOM_SPLIT_SIGN`` cuts the text first; a piece that is a whole Markdown table is split by rows
   (header and separator repeated on every piece), any other piece by the recursive steps below.
2. Fenced code has its line breaks hidden, so no step cuts inside it; three or more line breaks become
   three.
3. The steps, coarsest first: each custom separator (its pieces may reach ``max_size``, are never joined
   or overlapped); Markdown headings level 1 to ``paragraph_chunk_deep`` (the heading path is written
   before every chunk of the deepest level, the source's line break kept); fenced code (a piece of its
   own, up to ``min(max_size, 4 × chunk_size)``); Markdown tables (split by rows when too big); blank
   lines; line breaks; ``。``/``a. ``; ``！``/``! ``; ``？``/``? ``; ``；``/``; ``; ``，``/``, ``; fixed
   slices of ``chunk_size`` characters.
4. Pieces are joined while they fit ``chunk_size``; a joined chunk that overshoots by less than 20 %
   is kept whole (so chunks run past ``chunk_size`` to the end of a sentence or paragraph), else the
   piece is split at the next step. From the sentence steps on, the next chunk starts with the last
   sentences of the previous one: more than ``round(chunk_size × overlap_ratio)`` characters, at most
   ``chunk_size × 0.4``.
5. Each chunk is trimmed, its line endings made LF and 3+ line breaks made two; every other character,
   trailing blanks included, is the source's.

Two deliberate differences, both where FastGPT loses text: it drops the heading of a section whose whole
text is one fenced code block (its code-block branch runs before its heading branch), and a closing
paragraph equal to the end of the chunk before it (it takes it for an overlap copy; its token mode asks
whether it is one, as this module does). Here both are kept.

Sizes are FastGPT's ``getTextValidLength``: non-whitespace characters, counted in UTF-16 code units as
JavaScript does (a character outside the BMP, e.g. an emoji, counts twice).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

DEFAULT_MAX_SIZE = 8000  # FastGPT's defaultMaxChunkSize
MAX_CODE_BLOCK_CHUNKS = 4
_SPLIT_MARKER = "SPLIT_HERE_SPLIT_HERE"
_CODE_MARKER = "CODE_BLOCK_LINE_MARKER"

_WHITESPACE = re.compile(r"\s+")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_CODE_BLOCK = re.compile(r"(```[\s\S]*?```|~~~[\s\S]*?~~~)")
_WHOLE_CODE_BLOCK = re.compile(r"^(```[\s\S]*```|~~~[\s\S]*~~~)$")
_MANY_BREAKS = re.compile(r"(\r?\n|\r){3,}")
_TABLE_STEP = re.compile(r"(\n\|(?:[^\n|]*\|)+\n\|(?:[:\-\s]*\|)+\n(?:\|(?:[^\n|]*\|)*\n)*)")
_TABLE_SEPARATOR = re.compile(r"^(\|[\s:]*-+[\s:]*)+\|$")
_C0_CONTROLS = re.compile(r"[\x00-\x08]")
_THREE_NEWLINES = re.compile(r"\n{3,}")

CUSTOM_SPLIT_SIGN = "-----CUSTOM_SPLIT_SIGN-----"


def _fastgpt_length(text: str) -> int:
    r"""FastGPT's ``getTextValidLength``: non-whitespace UTF-16 code units. (``str.split()`` cuts at the
    characters ``\s`` matches, and no astral character is whitespace; counting the words' lengths took a
    third of the CPU of deleting the whitespace with a regex. The length is additive: that of ``a + b``
    is that of ``a`` plus that of ``b``.)"""
    length = sum(map(len, text.split()))
    if text.isascii():
        return length
    return length + len(_ASTRAL.findall(text))


def _simple_text(text: str) -> str:
    """FastGPT's ``simpleText`` as it behaves: trim, LF line endings, 3+ line breaks → 2, C0 controls →
    space. (Its two blank-collapsing expressions use a ``[\\s&&[^\\n]]`` class that JavaScript reads as
    "a blank followed by ``]]``", so they leave ordinary text alone; they are not reproduced.)"""
    text = text.strip()
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _THREE_NEWLINES.sub("\n\n", text)
    return _C0_CONTROLS.sub(" ", text)


def _is_markdown_table(text: str) -> bool:
    """FastGPT's ``strIsMdTable``: a header row, a ``| --- |`` row, and only ``|…|`` rows after them."""
    if "|" not in text:
        return False
    lines = text.split("\n")
    if len(lines) < 2:
        return False
    header = lines[0].strip()
    if not header.startswith("|") or not header.endswith("|"):
        return False
    if not _TABLE_SEPARATOR.match(lines[1].strip()):
        return False
    for line in lines[2:]:
        row = line.strip()
        if row and (not row.startswith("|") or not row.endswith("|")):
            return False
    return True


def _has_data_row(table: str) -> bool:
    """A Markdown table has a row below its header and separator rows."""
    return sum(1 for line in table.split("\n") if line.strip()) > 2


@dataclass(frozen=True)
class _Step:
    pattern: re.Pattern[str] | str
    max_len: float
    split_around: bool = False


@dataclass(frozen=True)
class _Piece:
    text: str
    title: str
    max_size: float


class _FastGPTSplitter:
    """One ``commonSplit`` call: the steps for these settings and the recursion over them."""

    def __init__(
        self, chunk_size: float, max_size: float, overlap_ratio: float, depth: int, custom: tuple[str, ...]
    ) -> None:
        self.chunk_size = chunk_size
        self.max_size = max_size
        self.overlap_ratio = overlap_ratio
        self.depth = depth
        self.custom = custom
        self.overlap_len = _js_round(chunk_size * overlap_ratio)
        code_max = min(max_size, chunk_size * MAX_CODE_BLOCK_CHUNKS)
        headings = [
            _Step(re.compile(rf"^({'#' * level}\s[^\n]+\n)", re.MULTILINE), chunk_size)
            for level in range(1, min(depth, 8) + 1)
        ]
        self.steps: list[_Step] = [
            *(_Step(sep.replace("\\n", "\n"), max_size) for sep in custom),
            *headings,
            _Step(re.compile(r"(^|\n)(```[\s\S]*?```|~~~[\s\S]*?~~~)"), code_max, split_around=True),
            _Step(_TABLE_STEP, chunk_size),
            _Step(re.compile(r"(\n{2,})"), chunk_size),
            _Step(re.compile(r"([\n])"), chunk_size),
            _Step(re.compile(r"([。]|([a-zA-Z])\.\s)"), chunk_size),
            _Step(re.compile(r"([！]|!\s)"), chunk_size),
            _Step(re.compile(r"([？]|\?\s)"), chunk_size),
            _Step(re.compile(r"([；]|;\s)"), chunk_size),
            _Step(re.compile(r"([，]|,\s)"), chunk_size),
        ]
        self.custom_len = len(custom)
        self.markdown_index = depth - 1
        self.forbid_overlap_index = self.custom_len + self.markdown_index + 4

    # -- step kinds
    def _is_custom(self, step: int) -> bool:
        return step < self.custom_len

    def _is_markdown(self, step: int) -> bool:
        return self.custom_len <= step <= self.markdown_index + self.custom_len

    def split(self, text: str) -> list[str]:
        text = _CODE_BLOCK.sub(lambda m: m.group(0).replace("\n", _CODE_MARKER), text)
        text = _MANY_BREAKS.sub("\n\n\n", text)
        chunks = self._recurse(text, 0, "", "")
        return [chunk.replace(_CODE_MARKER, "\n").strip() for chunk in chunks]

    def _pieces(self, text: str, step: int) -> list[_Piece]:
        """``getSplitTexts``: ``text`` cut at this step's separator, each piece with its heading (Markdown
        steps) and the size it may reach."""
        if step >= len(self.steps):
            return [_Piece(text, "", self.chunk_size)]
        is_custom, is_markdown = self._is_custom(step), self._is_markdown(step)
        rule = self.steps[step]
        pattern = rule.pattern
        if isinstance(pattern, str):
            marked = text
            for literal in pattern.split("|"):
                marked = marked.replace(literal, _SPLIT_MARKER) if literal else marked
        else:
            marked = pattern.sub(self._marker(is_custom, is_markdown, rule.split_around), text)
        pieces: list[_Piece] = []
        for part in marked.split(_SPLIT_MARKER):
            if not part.strip():
                continue
            title = ""
            if is_markdown and isinstance(pattern, re.Pattern):
                found = pattern.search(part)
                title = found.group(0) if found else ""
            if is_custom or rule.max_len == self.chunk_size:  # no search: the size is the same either way
                size = rule.max_len
            else:
                size = self.chunk_size if not _matches(pattern, part) else rule.max_len
            body = part.replace(title, "", 1) if is_markdown and title else part
            if title or body.strip():
                pieces.append(_Piece(body, title, size))
        return pieces

    @staticmethod
    def _marker(is_custom: bool, is_markdown: bool, around: bool) -> str:
        """The replacement template of a step's matches (``re`` expands it in C, and an unmatched group as
        ``""``; a Python callback per match cost more than the match)."""
        if is_custom:
            return _SPLIT_MARKER
        if is_markdown:
            return _SPLIT_MARKER + r"\g<1>"
        if around:
            return _SPLIT_MARKER + r"\g<0>" + _SPLIT_MARKER
        return r"\g<1>" + _SPLIT_MARKER

    def _overlap(self, text: str, step: int) -> str:
        """``getOneTextOverlapText``: the tail of ``text`` the next chunk starts with."""
        if step <= self.forbid_overlap_index or self.overlap_len == 0 or step >= len(self.steps):
            return ""
        max_overlap = self.chunk_size * 0.4
        overlap = ""
        for piece in reversed(self._pieces(text, step)):
            candidate = piece.text + overlap
            size = _fastgpt_length(candidate)
            if size > self.overlap_len:
                if size > max_overlap:
                    return self._overlap(candidate, step + 1) or overlap
                return candidate
            overlap = candidate
        return overlap

    def _slices(self, text: str) -> list[str]:
        length = max(1, math.floor(self.chunk_size))
        stride = max(1, math.floor(self.chunk_size - self.overlap_len))
        return [text[i : i + length] for i in range(0, len(text), stride)]

    def _recurse(self, text: str, step: int, last: str, parent_title: str) -> list[str]:
        """``splitTextRecursively``; ``last`` is the open text the next piece joins."""
        if step >= len(self.steps):
            combined = last + text
            if _fastgpt_length(combined) < self.max_size:
                return [combined]
            return self._slices(combined)
        is_markdown = self._is_markdown(step)
        forbid_concat = self._is_custom(step)
        pieces = self._pieces(text, step)
        chunks: list[str] = []
        overlap = False  # ``last`` repeats the end of the chunk before it
        joined_last, joined_last_len = "", 0  # ``last`` made by joining pieces, and its length
        i = 0
        while i < len(pieces):
            piece = pieces[i]
            i += 1
            max_len = piece.max_size
            # pieces joined one by one: the open text's length is known (measuring it again each time
            # was quadratic in the pieces of a step)
            last_len = joined_last_len if last is joined_last else _fastgpt_length(last)
            current = piece.text
            joined = last + current
            joined_len = last_len + _fastgpt_length(current)
            # FastGPT takes this branch at a heading step too, and so drops the heading of a section
            # whose whole text is one code block; Fathom keeps the heading
            if not is_markdown and _WHOLE_CODE_BLOCK.match(current.strip()):
                if last_len > 0:
                    chunks.append(last)
                    last = ""
                    overlap = False
                if _fastgpt_length(current) > max_len:
                    restored = current.replace(_CODE_MARKER, "\n")
                    size = max(1, math.floor(self.chunk_size))
                    chunks.extend(restored[j : j + size] for j in range(0, len(restored), size))
                else:
                    chunks.append(current)
                continue
            # a table cut from its rows (its last row had no line break, so the table step left it in
            # the next piece) is only a header: split as text, or the header would be lost
            if _is_markdown_table(current) and _has_data_row(current) and joined_len > max_len:
                if last_len > 0:
                    chunks.append(last)
                    last = ""
                    overlap = False
                table_size = self.chunk_size * 1.2
                resplit = _FastGPTSplitter(table_size, self.max_size, 0.15, 5, ()).split
                chunks.extend(_split_markdown_table_fastgpt(current, table_size, self.max_size, resplit))
                continue
            if is_markdown:
                inner = self._recurse(joined, step + 1, "", parent_title + piece.title)
                if not inner:
                    chunks.append(parent_title + piece.title)
                    continue
                deepest = step == self.markdown_index + self.custom_len
                prefix = parent_title + piece.title
                chunks.extend(prefix + chunk if deepest else chunk for chunk in inner)
                continue
            if joined_len > max_len:
                min_chunk, max_chunk = max_len * 0.8, max_len * 1.2
                if joined_len < max_chunk:
                    chunks.append(joined)
                    last = self._overlap(joined, step)
                    overlap = True
                    continue
                if last_len > min_chunk:
                    chunks.append(last)
                    last = self._overlap(last, step)
                    overlap = True
                    i -= 1
                    continue
                inner = self._recurse(current, step + 1, last, parent_title + piece.title)
                if not inner:
                    continue
                tail = inner[-1]
                if _fastgpt_length(tail) < min_chunk:
                    chunks.extend(inner[:-1])
                    last = tail
                    overlap = False
                    continue
                chunks.extend(inner)
                last = self._overlap(tail, step)
                overlap = True
                continue
            if forbid_concat:
                chunks.append(current)
                continue
            last, joined_last, joined_last_len = joined, joined, joined_len
            overlap = False
        # FastGPT (by characters) skips the rest when the last chunk ends with it, taking it for an overlap
        # copy: a repeated closing paragraph was lost. It asks whether it *is* an overlap, as FastGPT's
        # token mode does.
        if last and chunks and chunks[-1] and not (overlap and chunks[-1].endswith(last)):
            tail_chunk = chunks[-1]
            small = _fastgpt_length(last) < self.chunk_size * 0.4
            if small and not _WHOLE_CODE_BLOCK.match(tail_chunk.strip()):
                chunks[-1] = tail_chunk + last
            else:
                chunks.append(last)
        elif last and not chunks:
            chunks.append(last)
        return chunks


def _matches(pattern: re.Pattern[str] | str, text: str) -> bool:
    return pattern in text if isinstance(pattern, str) else pattern.search(text) is not None


def _js_round(value: float) -> int:
    return math.floor(value + 0.5)


def _split_markdown_table_fastgpt(
    text: str, chunk_size: float, max_size: float, resplit: Callable[[str], list[str]]
) -> list[str]:
    """FastGPT's ``markdownTableSplit``: rows packed up to ``chunk_size``, the header and separator rows
    repeated on every piece; a table with no data row gives no chunk."""
    lines = [line for line in text.split("\n") if line.strip()]
    if len(lines) < 2:
        return [text]
    if len(lines) == 2:
        return []
    head = f"{lines[0]}\n{lines[1]}\n"
    chunks: list[str] = []
    chunk = head
    for row in lines[2:]:
        chunk_len = _fastgpt_length(chunk)
        if chunk_len + _fastgpt_length(row) > chunk_size:
            if chunk_len > max_size:  # one enormous row: split as text
                chunks.extend(resplit(chunk.replace(head, "", 1).strip()))
            elif chunk != head:
                chunks.append(chunk)
            chunk = head
        chunk += f"{row}\n"
    if chunk and (chunk != head or not chunks):
        chunks.append(chunk)
    return chunks


def split_text_fastgpt(
    text: str,
    chunk_size: int,
    *,
    max_size: int | None = None,
    overlap_ratio: float = 0.15,
    paragraph_chunk_deep: int = 5,
    custom_separators: tuple[str, ...] = (),
) -> list[str]:
    """FastGPT's ``splitText2Chunks`` (see the module docstring); empty chunks are dropped."""
    limit = DEFAULT_MAX_SIZE if max_size is None else max_size
    splitter = _FastGPTSplitter(chunk_size, limit, overlap_ratio, paragraph_chunk_deep, custom_separators)
    chunks: list[str] = []
    for part in text.split(CUSTOM_SPLIT_SIGN):
        if _is_markdown_table(part):
            chunks.extend(_split_markdown_table_fastgpt(part, chunk_size, limit, splitter.split))
        else:
            chunks.extend(splitter.split(part))
    return [cleaned for cleaned in (_simple_text(chunk) for chunk in chunks) if cleaned]
