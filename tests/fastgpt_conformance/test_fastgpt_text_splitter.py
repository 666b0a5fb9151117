"""FastGPT's text-splitter cases, restated as data, against ``fathom.knowledge.chunk.split_text_to_chunks``.

Source: labring/FastGPT ``packages/global/test/common/string/textSplitter.test.ts`` at
8b5b89f4f4bd05405f822248124a8b7092e870b5 (``splitText2Chunks``), every case: 1, 2, 3, 4, 5, 6, 7, 7.5, 8,
8.1, 9, 10, 11, 12, 13, 14. The long inputs are in ``splitter_texts``.

Fathom has two splitter rules (``SplitOptions.rule``, a collection's ``chunkSplitRule``): ``"fastgpt"``
(the default), FastGPT's own algorithm, gives what FastGPT's test expects except where ``fastgpt_rule``
says otherwise (case 9: FastGPT loses a table row, ``why_rule``); ``"fathom"``, the
section-and-block splitter with a hard size bound, gives FastGPT's value where ``fathom`` is absent, and
otherwise the value ``fathom`` checks — and not FastGPT's — for the reason in ``why``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
import splitter_texts as t

from fathom.knowledge.chunk import SplitOptions, split_text_to_chunks
from fathom.knowledge.text import valid_length

Check = Callable[[list[str]], None]


def equals(expected: list[str]) -> Check:
    def check(chunks: list[str]) -> None:
        assert chunks == expected

    return check


def equals_without_whitespace(expected: list[str]) -> Check:
    """FastGPT's case 3 compares chunks with all whitespace removed (its ``simpleChunks``)."""

    def check(chunks: list[str]) -> None:
        assert [re.sub(r"\s+", "", c) for c in chunks] == [re.sub(r"\s+", "", c) for c in expected]

    return check


def cut_before(text: str, starts: tuple[str, ...]) -> list[str]:
    cuts = [0, *(text.index(start) for start in starts), len(text)]
    return [text[a:b] for a, b in zip(cuts, cuts[1:], strict=False)]


def check_7_5(chunks: list[str]) -> None:
    """Two chunks, cut at ``----`` only: each longer than chunkSize 200 (so ``maxSize`` 2000 applied)."""
    assert len(chunks) == 2
    assert all(200 < len(chunk) <= 2000 for chunk in chunks)
    assert "第一段内容" in chunks[0] and "FastGPT 是一个基于 LLM 大语言模型" in chunks[0]
    assert "第二段内容" in chunks[1] and "FastGPT 支持多种 LLM 模型" in chunks[1]


def check_8(chunks: list[str]) -> None:
    """A long code block is cut off from the prose before it, never swallowed; every chunk ≤ 1.2 × 500."""
    assert "这是一个测试的内容，包含代码块" in chunks[0]
    assert "~~~js" not in chunks[0]
    assert any(chunk.startswith("~~~js") for chunk in chunks)
    assert any(chunk.endswith("~~~") for chunk in chunks)
    assert "CODE_BLOCK_LINE_MARKER" not in "\n".join(chunks)
    assert "最大上下文" in chunks[-1]
    assert max(valid_length(c) for c in chunks) <= 500 * 1.2


def check_8_1(chunks: list[str]) -> None:
    """A short code block after 120 paragraphs is a chunk of its own; nothing before it is merged in."""
    assert t.IMAGE_CODE_BLOCK_8_1 in chunks
    index = chunks.index(t.IMAGE_CODE_BLOCK_8_1)
    assert index > 0
    assert t.IMAGE_CODE_BLOCK_8_1 not in chunks[index - 1]
    assert "第0段内容" not in chunks[index]
    assert max(valid_length(c) for c in chunks) <= 1200


def check_14(chunks: list[str]) -> None:
    """1,800 characters with no separator: nothing lost, no empty chunk."""
    assert "".join(chunks) == "A" * 1800
    assert all(chunks)


def fathom_sizes(count: int, limit: int) -> Check:
    def check(chunks: list[str]) -> None:
        assert len(chunks) == count
        assert max(valid_length(c) for c in chunks) <= limit

    return check


def fathom_9(chunks: list[str]) -> None:
    # Fathom's rule repeats the header on every table piece and keeps every row, where FastGPT's expected
    # output gives the second piece of table 1 no header and drops its last row: there Fathom looks right.
    assert len(chunks) == 4
    assert all(t.HEADER_9 in chunk or t.HEADER_9_3 in chunk for chunk in chunks)
    rows = "\n".join(chunks).count(t.R["1000"])
    assert rows == t.TABLE_1_KEYS_9.count("1000")  # FastGPT's expected chunks hold one fewer
    # and a caption after a table ends the chunk before it (FastGPT: opens the next one)
    assert chunks[2].endswith("结束了")


def fathom_13(chunks: list[str]) -> None:
    assert len(chunks) == 3
    assert all(chunk.startswith(f"{t.HEADING_13}\n\n") for chunk in chunks)
    assert chunks[0].endswith(t.CAPTION_13)


def fathom_8_1(chunks: list[str]) -> None:
    assert t.IMAGE_CODE_BLOCK_8_1 in chunks[-1] and chunks[-1].endswith("后续正文。")
    assert max(valid_length(c) for c in chunks) <= 1200


HEADING_BREAK = (
    "Fathom's rule puts a blank line between a chunk's heading path and its text; FastGPT keeps the "
    "source's line break there"
)
WHITESPACE = (
    "Fathom's rule normalises whitespace (trailing blanks dropped, a blank line after the top heading at "
    "depth 1); FastGPT's returns the text unchanged at paragraph depth 0 or 1"
)
BOUNDED = (
    "Fathom's rule cuts at chunkSize (at most 1.2 × chunkSize after merging small pieces) and overlaps "
    "only inside a cut paragraph; FastGPT's lets a chunk run up to 1.2 × chunkSize to the end of a "
    "sentence or paragraph and overlaps the last sentences of the previous chunk"
)
MAX_SIZE = (
    "Fathom's rule re-splits a piece cut by a custom separator at chunkSize; FastGPT's lets it reach maxSize"
)
CODE_TAIL = (
    "Fathom's rule packs a short code block with the paragraph after it (one heading section); FastGPT's "
    "keeps a code block a chunk of its own"
)
TABLE = (
    "Fathom's rule repeats the table header on every piece, keeps every row and lets a caption after a "
    "table end the chunk before it; FastGPT's opens the next chunk with it, and its expected output drops "
    "a row (Fathom looks right there)"
)
TABLE_13 = (
    "Fathom's rule writes a blank line after the heading path of each table piece and packs 28 rows "
    "(1.2 × chunkSize); FastGPT's keeps the source's line break and packs 27"
)
LOST_ROW = (
    "FastGPT loses table 1's last row: it equals the end of the chunk before it, and FastGPT (counting "
    "characters) takes such a rest for an overlap copy and skips it; Fathom's fastgpt rule asks whether "
    "it is one, as FastGPT's token mode does, and keeps the row"
)
DEPTH_TEXT = "# A\naf da da fda a a \n\n## B\n段落 2\n### D\n段落 3\n## E\n段落 4"

CASES: list[dict[str, Any]] = [
    {
        "test": "Test splitText2Chunks 1",
        "input": "# A\n\naf da da fda a a \n\n## B\n\n阿凡撒发生的都是发大水\n\n### c\n\ndsgsgfsgs22\n\n"
        "#### D\n\ndsgsgfsgs22\n\n##### E\n\ndsgsgfsgs22sddddddd\n",
        "options": {"chunk_size": 2000},
        "fastgpt": equals(
            [
                "# A\n\naf da da fda a a",
                "# A\n## B\n\n阿凡撒发生的都是发大水",
                "# A\n## B\n### c\n\ndsgsgfsgs22",
                "# A\n## B\n### c\n#### D\n\ndsgsgfsgs22",
                "# A\n## B\n### c\n#### D\n##### E\n\ndsgsgfsgs22sddddddd",
            ]
        ),
    },
    {
        "test": "Test splitText2Chunks 2",
        "input": "# A\n\naf da da fda a a \n\n### D\n\ndsgsgfsgs22",
        "options": {"chunk_size": 2000},
        "fastgpt": equals(["# A\n\naf da da fda a a", "# A\n### D\n\ndsgsgfsgs22"]),
    },
    {
        "test": "Test splitText2Chunks 3",
        "input": t.TEXT_3,
        "options": {"chunk_size": 500},
        # five chunks of 541, 522, 476, 704 and 637 non-blank characters
        "fastgpt": equals_without_whitespace(cut_before(t.TEXT_3, t.CUTS_3)),
        "fathom": fathom_sizes(6, 600),
        "why": BOUNDED,
    },
    {
        "test": "Test splitText2Chunks 4",
        "input": t.TEXT_4,
        "options": {"chunk_size": 500, "overlap_ratio": 0.2},
        "fastgpt": equals(["".join(t.SENTENCES_4[a:b]) for a, b in t.SENTENCE_RUNS_4]),
        "fathom": fathom_sizes(6, 600),
        "why": BOUNDED,
    },
    {
        "test": "Test splitText2Chunks 5",
        "input": "这是测试文本 1\n----\n这是测试文本 2,\n---\n----\n这是测试文本 3\n----\n"
        "这是测试文本 4\n----",
        "options": {"chunk_size": 500, "custom_separators": ("----",)},
        "fastgpt": equals(["这是测试文本 1", "这是测试文本 2,\n---", "这是测试文本 3", "这是测试文本 4"]),
    },
    {
        "test": "Test splitText2Chunks 6",
        "input": t.TEXT_6,
        "options": {"chunk_size": 500, "custom_separators": ("----",)},
        "fastgpt": equals(["这是测试文本 1，短的", f"这是测试文本 2,长的。\n{t.LONG_6}"]),
        "fathom": fathom_sizes(3, 600),
        "why": MAX_SIZE,
    },
    {
        "test": "Test splitText2Chunks 7",
        "input": "111\n222\n\n333",
        "options": {"chunk_size": 2000, "custom_separators": ("\\n\\n",)},
        "fastgpt": equals(["111\n222", "333"]),
    },
    {
        # Fathom's rule meets this case's checks too: its pieces (≤ 1.2 × 200 non-blank characters)
        # happen to be the two separator pieces.
        "test": "Test splitText2Chunks 7.5 - Custom separator uses maxSize for splitting",
        "input": t.TEXT_7_5,
        "options": {"chunk_size": 200, "max_size": 2000, "custom_separators": ("----",)},
        "fastgpt": check_7_5,
    },
    {
        "test": "Test splitText2Chunks 8",
        "input": t.TEXT_8,
        "options": {"chunk_size": 500, "max_size": 100000},
        "fastgpt": check_8,
    },
    {
        "test": "Test splitText2Chunks 8.1 - code block should not swallow long previous text",
        "input": t.TEXT_8_1,
        "options": {"chunk_size": 1000, "max_size": 128000, "overlap_ratio": 0},
        "fastgpt": check_8_1,
        "fathom": fathom_8_1,
        "why": CODE_TAIL,
    },
    {
        "test": "Test splitText2Chunks 9",
        "input": t.TEXT_9,
        "options": {"chunk_size": 300},
        "fastgpt": equals(t.EXPECTED_9),
        # the fastgpt rule keeps table 1's last row, which FastGPT loses (module docstring)
        "fastgpt_rule": equals([t.EXPECTED_9[0], f"{t.EXPECTED_9[1]}\n{t.R['1000']}", *t.EXPECTED_9[2:]]),
        "why_rule": LOST_ROW,
        "fathom": fathom_9,
        "why": TABLE,
    },
    {
        "test": "Test splitText2Chunks 10",
        "input": DEPTH_TEXT,
        "options": {"chunk_size": 2000, "paragraph_chunk_deep": 0},
        "fastgpt": equals([DEPTH_TEXT]),
        "fathom": equals(["# A\naf da da fda a a\n\n## B\n段落 2\n### D\n段落 3\n## E\n段落 4"]),
        "why": WHITESPACE,
    },
    {
        "test": "Test splitText2Chunks 11",
        "input": DEPTH_TEXT,
        "options": {"chunk_size": 2000, "paragraph_chunk_deep": 1},
        "fastgpt": equals([DEPTH_TEXT]),
        "fathom": equals(["# A\n\naf da da fda a a\n\n## B\n段落 2\n### D\n段落 3\n## E\n段落 4"]),
        "why": WHITESPACE,
    },
    {
        "test": "Test splitText2Chunks 12",
        "input": DEPTH_TEXT,
        "options": {"chunk_size": 2000, "paragraph_chunk_deep": 2},
        "fastgpt": equals(["# A\naf da da fda a a", "# A\n## B\n段落 2\n### D\n段落 3", "# A\n## E\n段落 4"]),
        "fathom": equals(
            ["# A\n\naf da da fda a a", "# A\n## B\n\n段落 2\n### D\n段落 3", "# A\n## E\n\n段落 4"]
        ),
        "why": HEADING_BREAK,
    },
    {
        "test": "Test splitText2Chunks 13 - Table split with empty lastText",
        "input": t.TEXT_13,
        "options": {"chunk_size": 1000},
        "fastgpt": equals(t.EXPECTED_13),
        "fathom": fathom_13,
        "why": TABLE_13,
    },
    {
        "test": "Test splitText2Chunks 14 - lastText not lost when strategies exhausted",
        "input": "A" * 1800,
        "options": {"chunk_size": 500, "overlap_ratio": 0},
        "fastgpt": check_14,
    },
]


def _split(case: dict[str, Any], rule: str) -> list[str]:
    return split_text_to_chunks(case["input"], SplitOptions(**case["options"], rule=rule))


@pytest.mark.parametrize("case", CASES, ids=[c["test"] for c in CASES])
def test_fastgpt_rule_matches_fastgpt_or_differs_as_explained(case: dict[str, Any]) -> None:
    chunks = _split(case, "fastgpt")
    if "fastgpt_rule" not in case:
        case["fastgpt"](chunks)
        return
    assert case["why_rule"]
    case["fastgpt_rule"](chunks)
    with pytest.raises(AssertionError):
        case["fastgpt"](chunks)


@pytest.mark.parametrize("case", CASES, ids=[c["test"] for c in CASES])
def test_fathom_rule_matches_fastgpt_or_differs_as_explained(case: dict[str, Any]) -> None:
    chunks = _split(case, "fathom")
    if "fathom" not in case:
        case["fastgpt"](chunks)
        return
    assert case["why"]
    case["fathom"](chunks)
    with pytest.raises(AssertionError):
        case["fastgpt"](chunks)
