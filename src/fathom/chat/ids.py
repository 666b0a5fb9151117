"""Identifiers: FastGPT-style nanoids for chats and chat items."""

from __future__ import annotations

import os
import string

_ALPHABET = string.ascii_letters + string.digits
_LIMIT = 256 - 256 % len(_ALPHABET)  # bytes at or above it would favour the first letters
# byte -> its letter (``_ALPHABET[byte % 62]``), applied by ``bytes.translate`` in C; bytes at or above
# ``_LIMIT`` are deleted instead
_LETTER_OF_BYTE = bytes(ord(_ALPHABET[b % len(_ALPHABET)]) if b < _LIMIT else 0 for b in range(256))
_BIASED_BYTES = bytes(range(_LIMIT, 256))


def nanoid(size: int = 24) -> str:
    """A random id of ``size`` letters and digits (FastGPT ``getNanoid``), from one ``os.urandom``
    call (unbiased: bytes past the last whole multiple of the alphabet are skipped), mapped to letters
    by one ``bytes.translate`` (a fifth of a list comprehension's time)."""
    letters = os.urandom(size + 8).translate(_LETTER_OF_BYTE, _BIASED_BYTES)
    while len(letters) < size:
        letters += os.urandom(size + 8).translate(_LETTER_OF_BYTE, _BIASED_BYTES)
    return letters[:size].decode("ascii")
