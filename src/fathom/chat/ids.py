"""Identifiers: FastGPT-style nanoids for chats and chat items."""

from __future__ import annotations

import secrets
import string

_ALPHABET = string.ascii_letters + string.digits


def nanoid(size: int = 24) -> str:
    """A random id of ``size`` letters and digits (FastGPT ``getNanoid``)."""
    return "".join(secrets.choice(_ALPHABET) for _ in range(size))
