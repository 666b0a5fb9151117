"""Identifiers: FastGPT-style nanoids for chats and chat items."""

from __future__ import annotations

import os
import string

_ALPHABET = string.ascii_letters + string.digits
_LIMIT = 256 - 256 % len(_ALPHABET)  # bytes at or above it would favour the first letters


def nanoid(size: int = 24) -> str:
    """A random id of ``size`` letters and digits (FastGPT ``getNanoid``), from one ``os.urandom``
    call (unbiased: bytes past the last whole multiple of the alphabet are skipped)."""
    chars: list[str] = []
    while len(chars) < size:
        chars += [_ALPHABET[b % len(_ALPHABET)] for b in os.urandom(size + 8) if b < _LIMIT]
    return "".join(chars[:size])
