"""JSON text as Fathom writes it everywhere (FastGPT's form: no spaces, non-ASCII kept), and read back.

Encoded by ``orjson`` where it can: a knowledge-base chat's node responses (~100 KB with their quote
lists) cost ~380 µs in ``json.dumps`` and ~20 µs here, and a chat writes them twice (the stream, the
stored item). The text is the same as ``json.dumps(value, ensure_ascii=False, separators=(",", ":"))``
gives, but for two cases: a float printed in exponent form (``1e16`` where ``json`` writes ``1e+16``; the
same number to any JSON reader) and NaN or infinity, written ``null`` (``json`` writes ``NaN``, which no
JSON reader, PostgreSQL's included, accepts). Whatever ``orjson`` refuses (keys that are not strings,
integers beyond 64 bits, lone surrogates, dates and dataclasses) goes to ``json``, which writes it or
raises as it always did; what ``json`` cannot write but ``orjson`` can (a UUID, an enum) is written as its
value. Reading takes ``orjson`` first and ``json`` for what it refuses (``NaN`` in old stored text); an
integer beyond 64 bits reads as a float, as JavaScript's ``JSON.parse`` (FastGPT's reader) reads it.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

# dates and dataclasses go to json (which raises for them, as before) rather than being written silently
_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


def _by_json(value: Any) -> str:
    """What ``orjson`` refused, written by ``json`` (or refused by it) in the same compact form."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def dumps_bytes(value: Any) -> bytes:
    """``value`` as compact UTF-8 JSON."""
    try:
        return orjson.dumps(value, option=_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return _by_json(value).encode()


def dumps(value: Any) -> str:
    """``value`` as compact JSON text."""
    try:
        return orjson.dumps(value, option=_OPTIONS).decode()
    except TypeError:
        return _by_json(value)


def loads(text: str | bytes) -> Any:
    """The value of a JSON text (``json.loads``'s result, ``NaN`` and ``Infinity`` included)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)
