"""Property tests of the splitter: Fathom's rule (``rule="fathom"``) for all three invariants below, FastGPT's
(``rule="fastgpt"``, the default) for the first one (it bounds no size).

Invariants (``S(x)`` = ``x`` with all whitespace removed, after ``normalize_text``):

1. No text lost, order preserved: ``S(input)`` is a subsequence of ``S("".join(chunks))``. Only
   whitespace may change (FastGPT normalises it too); repeated headings, table headers, fences and
   overlap only ADD characters, so anything dropped or reordered breaks the subsequence.
2. Nothing invented for plain prose: every chunk's ``S`` is a contiguous substring of ``S(input)``,
   and chunk start positions in the input never go backwards.
3. Size: every chunk has at most ``floor(1.2 * chunk_size)`` non-whitespace characters (the inputs
   keep heading paths short, so no unsplittable unit arises).
"""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from fathom.knowledge.chunk import SplitOptions, split_text_to_chunks
from fathom.knowledge.text import normalize_text, valid_length


def strip_whitespace(text: str) -> str:
    """``text`` without any whitespace (compare texts modulo layout)."""
    return "".join(text.split())


_WORDS = st.sampled_from(
    ["alpha", "beta", "gamma", "数据", "知识库", "检索", "x1", "3.14", "foo|bar", "#tag", "a.b", "Q"]
)
_PUNCT = st.sampled_from(
    [" ", " ", " ", ". ", ", ", "! ", "? ", "; ", "。", "，", "！", "？", "；", "\n", "\n\n"]
)


@st.composite
def _prose(draw: st.DrawFn, max_words: int = 120) -> str:
    n = draw(st.integers(min_value=0, max_value=max_words))
    parts: list[str] = []
    for _ in range(n):
        parts.append(draw(_WORDS))
        parts.append(draw(_PUNCT))
    return "".join(parts)


@st.composite
def _markdown(draw: st.DrawFn) -> str:
    blocks: list[str] = []
    for _ in range(draw(st.integers(min_value=1, max_value=8))):
        kind = draw(st.sampled_from(["heading", "prose", "prose", "table", "code", "long", "html"]))
        if kind == "heading":
            level = draw(st.integers(min_value=1, max_value=3))
            blocks.append("#" * level + " " + draw(st.sampled_from(["Intro", "用法", "API", "Notes"])))
        elif kind == "prose":
            blocks.append(draw(_prose(40)))
        elif kind == "long":
            blocks.append(draw(st.text(alphabet="abcxyz数据", min_size=50, max_size=400)))
        elif kind == "html":
            rows = draw(st.integers(min_value=1, max_value=20))
            cells = "\n".join(f"<tr><td>{draw(_WORDS)}</td><td>{i}</td></tr>" for i in range(rows))
            blocks.append(f"<table>\n<tr><th>k</th><th>v</th></tr>\n{cells}\n</table>")
        elif kind == "table":
            rows = draw(st.integers(min_value=1, max_value=25))
            cells = draw(st.lists(_WORDS.filter(lambda w: "|" not in w), min_size=rows, max_size=rows))
            body = "\n".join(f"| {c} | {i} |" for i, c in enumerate(cells))
            blocks.append(f"| k | v |\n| --- | --- |\n{body}")
        else:
            lines = draw(st.lists(st.text(alphabet="abc =()数", max_size=60), min_size=1, max_size=30))
            blocks.append("```py\n" + "\n".join(lines) + "\n```")
    return "\n\n".join(blocks)


def _is_subsequence(needle: str, haystack: str) -> bool:
    it = iter(haystack)
    return all(ch in it for ch in needle)


@settings(max_examples=150, deadline=None)
@given(
    text=_markdown(), size=st.integers(min_value=60, max_value=600), ratio=st.sampled_from([0.0, 0.15, 0.4])
)
def test_markdown_chunks_lose_nothing_keep_order_and_respect_the_limit(
    text: str, size: int, ratio: float
) -> None:
    options = SplitOptions(chunk_size=size, overlap_ratio=ratio, rule="fathom")
    chunks = split_text_to_chunks(text, options)
    assert _is_subsequence(strip_whitespace(normalize_text(text)), strip_whitespace("".join(chunks)))
    for chunk in chunks:
        assert chunk == chunk.strip() and chunk
        assert valid_length(chunk) <= options.hard_limit


@settings(max_examples=150, deadline=None)
@given(text=_prose(), size=st.integers(min_value=20, max_value=400), ratio=st.sampled_from([0.0, 0.15, 0.3]))
def test_prose_chunks_are_ordered_substrings_of_the_input(text: str, size: int, ratio: float) -> None:
    text = text.replace("#", "").replace("|", "")
    options = SplitOptions(chunk_size=size, overlap_ratio=ratio, rule="fathom")
    chunks = split_text_to_chunks(text, options)
    source = strip_whitespace(normalize_text(text))
    assert _is_subsequence(source, strip_whitespace("".join(chunks)))
    previous_start = 0
    for chunk in chunks:
        assert valid_length(chunk) <= options.hard_limit
        found = source.find(strip_whitespace(chunk), previous_start)
        assert found >= 0, chunk
        previous_start = found


@settings(max_examples=150, deadline=None)
@example(  # found by CI: a closing table row with no line break, cut off from its header by the table step
    text="a" * 50 + "\n\n" + "a" * 50 + "\n\n| k | v |\n| --- | --- |\n| alpha | 0 |", size=60, ratio=0.0
)
@given(
    text=st.one_of(_markdown(), _prose()),
    size=st.integers(min_value=60, max_value=600),
    ratio=st.sampled_from([0.0, 0.15, 0.4]),
)
def test_fastgpt_rule_loses_nothing_and_keeps_order(text: str, size: int, ratio: float) -> None:
    """FastGPT's algorithm (``rule="fastgpt"``) bounds no size, but drops and reorders nothing either."""
    options = SplitOptions(chunk_size=size, overlap_ratio=ratio, rule="fastgpt")
    chunks = split_text_to_chunks(text, options)
    assert _is_subsequence(strip_whitespace(text), strip_whitespace("".join(chunks)))
    assert all(chunk.strip() for chunk in chunks)
