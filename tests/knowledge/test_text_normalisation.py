"""``letters_and_digits`` (the dedupe normalisation) keeps exactly the Unicode letters and digits, on the
ASCII fast path and on the general path alike; ``has_letter_or_digit`` (which tokens full-text search keeps)
agrees with them."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from fathom.knowledge.text import has_letter_or_digit, letters_and_digits
from fathom.knowledge.tokenize import segment


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


@given(st.text())
def test_a_text_has_a_letter_or_digit_exactly_when_one_of_its_characters_is_one(text: str) -> None:
    assert has_letter_or_digit(text) == bool(_by_category(text))


def test_segmentation_keeps_tokens_with_a_letter_or_digit_and_drops_the_rest() -> None:
    assert segment("Hello, 世界! ... 42 -- x_y ¿") == ["hello", "世界", "42", "x_y"]
