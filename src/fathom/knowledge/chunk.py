"""The text splitter, ``split_text_to_chunks``: FastGPT's own algorithm (``rule="fastgpt"``, the default;
``fathom.knowledge.chunk_fastgpt``) or Fathom's rule (``rule="fathom"``), described here (spec §5.2).

Sizes are counted in non-whitespace characters (FastGPT's ``getTextValidLength``). The rules:

1. The text is normalised (line endings, runs of blank lines; see ``normalize_text``).
2. ``CUSTOM_SPLIT_SIGN`` and the custom separators cut the text into segments first; segments are
   never merged or overlapped with each other, and the separators themselves are dropped.
3. Each segment is read into Markdown heading sections (``paragraph_chunk_deep`` levels, default 5).
   Every chunk of a section starts with its heading path (``# A\\n## B``), so a heading stays with
   its text; overlap never crosses a section.
4. A section's blocks (paragraphs, code, tables) are packed into chunks of ``chunk_size``. A block
   that does not fit is split: prose down the separator ladder (lines, ``。``/``. ``, ``！``, ``？``,
   ``；``, ``，``, then fixed slices) with a sentence overlap of ``overlap_ratio`` (0.15, at most 0.4)
   of the chunk size; code by lines with the fences repeated; tables by rows with the header repeated.
   Structured pieces may use ``CHUNK_SIZE_MULTIPLIER`` (1.2) times the chunk size, as in FastGPT.
5. Adjacent small chunks of one heading section are merged while the result stays within
   1.2 × ``chunk_size``, and a copied overlap is not repeated. Heading sections are never merged with
   each other: each keeps its own chunks, however small (FastGPT's ``textSplitter.test.ts`` cases 1, 2).

Guarantee: every chunk has at most ``floor(1.2 * chunk_size)`` non-whitespace characters, unless its
heading path alone leaves less than a quarter of the chunk size for text (an unsplittable unit).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from fathom.knowledge.chunk_blocks import Block, Section, parse_sections
from fathom.knowledge.chunk_fastgpt import split_text_fastgpt
from fathom.knowledge.chunk_prose import split_prose
from fathom.knowledge.chunk_structured import split_code_block, split_html_table, split_markdown_table
from fathom.knowledge.text import normalize_text, valid_length

CUSTOM_SPLIT_SIGN = "-----CUSTOM_SPLIT_SIGN-----"
OVERLAP_RATIO = 0.15
MAX_OVERLAP_RATIO = 0.4
CHUNK_SIZE_MULTIPLIER = 1.2
MIN_CHUNK_SIZE_RATIO = 0.8
SMALL_CHUNK_THRESHOLD = 400
SMALL_CHUNK_MERGE_THRESHOLD = 0.4
DEFAULT_PARAGRAPH_CHUNK_DEEP = 5
_BLOCK_JOINER = "\n\n"

SplitRule = Literal["fathom", "fastgpt"]
SPLIT_RULES: tuple[SplitRule, ...] = ("fathom", "fastgpt")
DEFAULT_SPLIT_RULE: SplitRule = "fastgpt"


@dataclass(frozen=True)
class SplitOptions:
    """Splitter settings (FastGPT ``SplitProps``)."""

    chunk_size: int
    overlap_ratio: float = OVERLAP_RATIO
    paragraph_chunk_deep: int = DEFAULT_PARAGRAPH_CHUNK_DEEP
    custom_separators: tuple[str, ...] = ()
    rule: SplitRule = DEFAULT_SPLIT_RULE
    max_size: int | None = None  # FastGPT's maxSize (rule "fastgpt" only; None: its default, 8000)

    def __post_init__(self) -> None:
        if self.rule not in SPLIT_RULES:
            raise ValueError(f"rule must be one of {', '.join(SPLIT_RULES)}, got {self.rule!r}")
        if self.chunk_size < 1:
            raise ValueError(f"chunk_size must be at least 1, got {self.chunk_size}")
        if not 0 <= self.overlap_ratio <= MAX_OVERLAP_RATIO:
            raise ValueError(
                f"overlap_ratio must be between 0 and {MAX_OVERLAP_RATIO}, got {self.overlap_ratio}"
            )
        if not 0 <= self.paragraph_chunk_deep <= 8:
            raise ValueError(f"paragraph_chunk_deep must be between 0 and 8, got {self.paragraph_chunk_deep}")

    @property
    def hard_limit(self) -> int:
        """Largest chunk (in non-whitespace characters) the splitter produces."""
        return math.floor(self.chunk_size * CHUNK_SIZE_MULTIPLIER)

    @property
    def overlap_len(self) -> int:
        return round(self.chunk_size * self.overlap_ratio)


@dataclass(frozen=True)
class _Piece:
    headings: tuple[str, ...]
    heading_ids: tuple[int, ...]
    body: str
    overlap_chars: int = 0  # body[:overlap_chars] repeats the end of the previous piece


def _render(headings: Sequence[str], body: str) -> str:
    head = "\n".join(headings)
    if head and body:
        return f"{head}\n\n{body}"
    return head or body


def _segments(text: str, separators: Sequence[str]) -> list[str]:
    parts = [text]
    for sep in [CUSTOM_SPLIT_SIGN, *separators]:
        sep = sep.replace("\\n", "\n")
        if sep:
            parts = [piece for part in parts for piece in part.split(sep)]
    return parts


def _split_oversized_block(
    block: Block, opts: SplitOptions, budget: int, structured_room: int
) -> list[_Piece]:
    pieces: list[str] | None = None
    if block.kind == "code":
        pieces = split_code_block(block.text, structured_room)
    elif block.kind == "table":
        pieces = split_markdown_table(block.text, structured_room)
    elif block.kind == "html_table":
        pieces = split_html_table(block.text, structured_room)
    if pieces is not None:
        return [_Piece((), (), piece) for piece in pieces]
    spans = split_prose(block.text, budget, opts.overlap_len, opts.chunk_size * MAX_OVERLAP_RATIO)
    return [_Piece((), (), block.text[s.start : s.end], s.body_start - s.start) for s in spans]


def _section_pieces(section: Section, opts: SplitOptions) -> list[_Piece]:
    heading_size = valid_length("".join(section.headings))
    floor = max(1, opts.chunk_size // 4)
    budget = max(opts.chunk_size - heading_size, floor)
    structured_room = max(opts.hard_limit - heading_size, floor)
    if not section.blocks:
        return [_Piece(section.headings, section.heading_ids, "")]
    pieces: list[_Piece] = []
    current: list[str] = []
    current_overlap = 0
    size = 0

    def flush() -> None:
        nonlocal current, size, current_overlap
        if current:
            pieces.append(
                _Piece(section.headings, section.heading_ids, _BLOCK_JOINER.join(current), current_overlap)
            )
        current, size, current_overlap = [], 0, 0

    for block in section.blocks:
        block_size = valid_length(block.text)
        if size + block_size <= budget:
            current.append(block.text)
            size += block_size
            continue
        flush()
        if block_size <= budget:
            current, size = [block.text], block_size
            continue
        split = _split_oversized_block(block, opts, budget, structured_room)
        tail = split[-1]
        tail_size = valid_length(tail.body)
        if block.kind == "text" and tail_size < budget * MIN_CHUNK_SIZE_RATIO:
            # a short last piece stays open so the next paragraph can join it
            pieces.extend(
                _Piece(section.headings, section.heading_ids, p.body, p.overlap_chars) for p in split[:-1]
            )
            current, size, current_overlap = [tail.body], tail_size, tail.overlap_chars
        else:
            pieces.extend(
                _Piece(section.headings, section.heading_ids, p.body, p.overlap_chars) for p in split
            )
    flush()
    return pieces


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _merge_small(pieces: list[_Piece], limit: int) -> list[str]:
    """Greedy merge of adjacent pieces while the merged chunk stays within ``limit``."""
    chunks: list[str] = []
    box = ""
    box_heading_ids: tuple[int, ...] = ()
    for piece in pieces:
        if box:
            common = _common_prefix(box_heading_ids, piece.heading_ids)
            addition = _render(piece.headings[common:], piece.body[piece.overlap_chars :].strip())
            candidate = f"{box}{_BLOCK_JOINER}{addition}" if addition else box
            if valid_length(candidate) <= limit:
                box, box_heading_ids = candidate, piece.heading_ids
                continue
            chunks.append(box)
        box, box_heading_ids = _render(piece.headings, piece.body.strip()), piece.heading_ids
    if box:
        chunks.append(box)
    return chunks


def split_text_to_chunks(text: str, options: SplitOptions) -> list[str]:
    """Split ``text`` into chunks following FastGPT's splitter rules (see the module docstring); with
    ``options.rule == "fastgpt"``, by FastGPT's own algorithm (``fathom.knowledge.chunk_fastgpt``)."""
    if options.rule == "fastgpt":
        return split_text_fastgpt(
            text,
            options.chunk_size,
            max_size=options.max_size,
            overlap_ratio=options.overlap_ratio,
            paragraph_chunk_deep=options.paragraph_chunk_deep,
            custom_separators=options.custom_separators,
        )
    chunks: list[str] = []
    for segment in _segments(normalize_text(text), options.custom_separators):
        segment = normalize_text(segment)
        if not segment:
            continue
        for section in parse_sections(segment, options.paragraph_chunk_deep):
            merged = _merge_small(_section_pieces(section, options), options.hard_limit)
            chunks.extend(c for c in (chunk.strip() for chunk in merged) if c)
    return chunks
