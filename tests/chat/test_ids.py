"""Chat and chat item ids (FastGPT nanoids): size, alphabet, no two alike."""

from __future__ import annotations

import string
from collections import Counter

from fathom.chat.ids import nanoid

ALPHABET = set(string.ascii_letters + string.digits)


def test_a_nanoid_has_the_size_asked_in_letters_and_digits() -> None:
    for size in (1, 8, 24, 100):
        made = nanoid(size)
        assert len(made) == size
        assert set(made) <= ALPHABET
    assert len(nanoid()) == 24


def test_nanoids_differ_and_use_the_whole_alphabet_evenly() -> None:
    made = [nanoid() for _ in range(4000)]
    assert len(set(made)) == len(made)
    letters = Counter("".join(made))  # 96,000 letters: about 1,548 of each of the 62
    assert set(letters) == ALPHABET
    assert min(letters.values()) > 1300 and max(letters.values()) < 1800
