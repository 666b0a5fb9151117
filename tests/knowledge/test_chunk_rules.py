"""Fathom's splitter rule (``rule="fathom"``: sections, blocks, a hard size bound; spec §5.2), one behaviour
per test. Since issue 35 the default rule is FastGPT's own algorithm (``rule="fastgpt"``, checked against
FastGPT's cases in ``tests/fastgpt_conformance/test_fastgpt_text_splitter.py``), so these tests name the
rule they check."""

from __future__ import annotations

import pytest

from fathom.knowledge.chunk import (
    CUSTOM_SPLIT_SIGN,
    SplitOptions,
    split_text_to_chunks,
)
from fathom.knowledge.text import valid_length


def strip_whitespace(text: str) -> str:
    """``text`` without any whitespace (compare texts modulo layout)."""
    return "".join(text.split())


def _split(text: str, size: int, **kw: object) -> list[str]:
    options = SplitOptions(chunk_size=size, rule="fathom", **kw)  # type: ignore[arg-type]
    return split_text_to_chunks(text, options)


def test_short_text_is_one_chunk() -> None:
    assert _split("  Hello world.  ", 100) == ["Hello world."]


def test_empty_text_has_no_chunks() -> None:
    assert _split(" \n\n ", 100) == []


def test_overlap_ratio_above_max_is_rejected() -> None:
    with pytest.raises(ValueError, match="overlap_ratio"):
        SplitOptions(chunk_size=100, overlap_ratio=0.41)


def test_sentence_split_overlaps_by_whole_sentences_within_ratio() -> None:
    text = " ".join(f"Sentence number {i} is here." for i in range(40))
    chunks = _split(text, 100)
    assert len(chunks) > 3
    for prev, nxt in zip(chunks, chunks[1:], strict=False):
        # the next chunk starts with the last sentence(s) of the previous one
        first_sentence = nxt.split(". ")[0] + "."
        assert prev.endswith(first_sentence)
        overlap = valid_length(first_sentence)
        assert round(100 * 0.15) <= overlap <= 100 * 0.4


def test_zero_overlap_ratio_gives_no_repeated_text() -> None:
    text = " ".join(f"Sentence number {i} is here." for i in range(40))
    chunks = _split(text, 100, overlap_ratio=0.0)
    assert strip_whitespace("".join(chunks)) == strip_whitespace(text)


def test_chinese_punctuation_is_in_the_separator_ladder() -> None:
    text = "。".join(f"这是第{i}个句子内容比较长一些" for i in range(30)) + "。"
    chunks = _split(text, 80)
    assert len(chunks) > 3
    assert all(chunk.endswith("。") for chunk in chunks)
    assert all(valid_length(c) <= 96 for c in chunks)


def test_chinese_commas_split_a_sentence_without_full_stops() -> None:
    text = "，".join(f"第{i}段没有句号的长长内容" for i in range(40))
    chunks = _split(text, 60, overlap_ratio=0.0)
    assert len(chunks) > 2
    assert all(chunk.endswith("，") for chunk in chunks[:-1])


def test_headings_are_kept_with_their_text_as_a_path() -> None:
    body_b = "阿凡撒发生的都是发大水。" * 30
    text = f"# A\n\nintro text\n\n## B\n\n{body_b}\n\n## C\n\nlast words"
    chunks = _split(text, 120)
    b_chunks = [c for c in chunks if "阿凡撒" in c]
    assert len(b_chunks) >= 3
    for chunk in b_chunks:
        # the path is printed first; a merged neighbour keeps "## B" right before the text
        assert chunk.startswith("# A\n")
        assert chunk.index("## B") < chunk.index("阿凡撒")
    assert sum(c.startswith("# A\n## B\n\n阿凡撒") for c in b_chunks) >= len(b_chunks) - 1


def test_overlap_never_crosses_a_heading() -> None:
    first = " ".join(f"Alpha fact {i} stands." for i in range(30))
    second = " ".join(f"Beta fact {i} stands." for i in range(30))
    chunks = _split(f"# One\n\n{first}\n\n# Two\n\n{second}", 150)
    for chunk in chunks:
        if chunk.startswith("# Two"):
            assert "Alpha" not in chunk
        if chunk.startswith("# One") and "# Two" not in chunk:
            assert "Beta" not in chunk


def test_each_heading_section_keeps_its_own_chunks_with_its_heading_path() -> None:
    # Was: small sections merged into one chunk up to 1.2 x the chunk size. FastGPT's own tests
    # (textSplitter.test.ts cases 1 and 2, tests/fastgpt_conformance) keep every heading section as its
    # own chunk however small, prefixed by its parent headings; issue 35 follows them.
    text = "# A\n\nfirst part\n\n## B\n\nsecond part\n\n## C\n\nthird part"
    assert _split(text, 1000) == ["# A\n\nfirst part", "# A\n## B\n\nsecond part", "# A\n## C\n\nthird part"]


def test_markdown_table_is_split_by_rows_with_the_header_repeated() -> None:
    rows = "\n".join(f"| row{i} | value number {i} |" for i in range(40))
    table = f"| name | value |\n| --- | --- |\n{rows}"
    chunks = _split(f"Intro line.\n\n{table}", 100)
    table_chunks = [c for c in chunks if "row" in c]
    assert len(table_chunks) > 2
    for chunk in table_chunks:
        lines = chunk[chunk.index("| name") :].split("\n")
        assert lines[0] == "| name | value |"
        assert lines[1] == "| --- | --- |"
        assert valid_length(chunk) <= 120
    seen = [line for c in table_chunks for line in c.split("\n") if line.startswith("| row")]
    assert seen == rows.split("\n")


def test_code_block_is_split_by_lines_with_fence_and_language_repeated() -> None:
    code = "```python\n" + "\n".join(f"value_{i} = compute({i})" for i in range(60)) + "\n```"
    chunks = _split(f"Some text.\n\n{code}\n\nAfter.", 120)
    code_chunks = [c for c in chunks if "value_" in c]
    assert len(code_chunks) > 2
    for chunk in code_chunks:
        body = chunk[chunk.index("```python") :]
        assert body.startswith("```python\n")
        assert body.count("```") == 2  # opened and closed inside the chunk
    lines = [ln for c in code_chunks for ln in c.split("\n") if ln.startswith("value_")]
    assert lines == [f"value_{i} = compute({i})" for i in range(60)]


def test_hash_inside_code_is_not_a_heading() -> None:
    text = "```bash\n# not a heading\necho hi\n```\n\nText after."
    chunks = _split(text, 1000)
    assert chunks == ["```bash\n# not a heading\necho hi\n```\n\nText after."]


def test_over_long_code_line_is_cut_by_characters_inside_fences() -> None:
    code = "```\n" + "x" * 500 + "\n```"
    chunks = _split(code, 100)
    assert len(chunks) >= 5
    assert all(c.startswith("```\n") and c.endswith("\n```") for c in chunks)
    assert "".join(c[4:-4] for c in chunks) == "x" * 500


def test_html_table_is_split_by_rows_with_thead_repeated() -> None:
    rows = "\n".join(f"<tr><td>cell {i}</td><td>data {i}</td></tr>" for i in range(30))
    html = f"<table>\n<thead><tr><th>A</th><th>B</th></tr></thead>\n<tbody>\n{rows}\n</tbody>\n</table>"
    chunks = _split(html, 150)
    assert len(chunks) > 2
    for chunk in chunks:
        assert chunk.startswith("<table>\n<thead><tr><th>A</th><th>B</th></tr></thead>")
        assert chunk.endswith("</table>")
    cells = [ln for c in chunks for ln in c.split("\n") if ln.startswith("<tr><td>")]
    assert cells == rows.split("\n")


def test_custom_separator_cuts_hard_and_is_dropped() -> None:
    text = "part one===part two===part three"
    assert _split(text, 1000, custom_separators=("===",)) == ["part one", "part two", "part three"]


def test_custom_separator_accepts_escaped_newline() -> None:
    assert _split("a line\nb line", 1000, custom_separators=("\\n",)) == ["a line", "b line"]


def test_custom_split_sign_always_separates() -> None:
    assert _split(f"left{CUSTOM_SPLIT_SIGN}right", 1000) == ["left", "right"]


def test_paragraph_deep_zero_treats_headings_as_text() -> None:
    body = " ".join(f"Word{i} is a sentence." for i in range(50))
    chunks = _split(f"# Title\n\n{body}", 100, paragraph_chunk_deep=0)
    assert chunks[0].startswith("# Title")
    assert not any(c.startswith("# Title") for c in chunks[1:])


def test_text_without_separators_falls_back_to_fixed_slices_with_overlap() -> None:
    text = "abcdefghij" * 30  # 300 characters, no separator at all
    chunks = _split(text, 100)
    assert all(valid_length(c) <= 100 for c in chunks)
    assert chunks[0] == text[:100]
    assert chunks[1].startswith(text[85:100])  # overlap of round(100 * 0.15) characters
