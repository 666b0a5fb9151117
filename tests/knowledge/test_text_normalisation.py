"""``letters_and_digits`` (the dedupe normalisation) keeps exactly the Unicode letters and digits, on the
ASCII fast path and on the general path alike."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from fathom.knowledge.text import letters_and_digits


def _by_category(text: str) -> str:
    return "".join(ch for ch in text if unicodedata.category(ch)[0] in "LN")


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_ascii_fast_path_keeps_exactly_letters_and_digits(text: str) -> None:
    assert letters_and_digits(text) == _by_category(text)


@given(st.text())
def test_any_text_keeps_exactly_letters_and_digits(text: str) -> None:
    assert letters_and_digits(text) == _by_category(text)


def test_punctuation_and_spaces_do_not_separate_duplicates() -> None:
    assert letters_and_digits("Hello, World! 123") == letters_and_digits(
        "hello world 123".title().replace(" ", "")
    )
    assert letters_and_digits("知识库，检索。ok_1") == "知识库检索ok1"
