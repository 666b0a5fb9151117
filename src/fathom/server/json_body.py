"""Reading request JSON that every backend can store: strict UTF-8, bounded nesting, integers of at most
:data:`MAX_INT_DIGITS` digits, finite numbers, no NUL or lone surrogates in strings. Each refusal is a
400 naming the problem and where it is (``body.messages[0]``)."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from fathom.server.errors import ApiError

#: deepest nesting of objects and arrays a request may carry (FastGPT workflows need about 10)
MAX_DEPTH = 64
#: Python's own limit on converting a decimal string to an int (``sys.get_int_max_str_digits``)
MAX_INT_DIGITS = 4300
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
#: a JSON escape that may decode to NUL or a surrogate (pairs are fine, but need a closer look)
_RISKY_ESCAPE = re.compile(r"\\u(?:0000|[dD][89abcdefABCDEF])")


def _invalid(message: str) -> ApiError:
    return ApiError(400, "invalidParams", message)


def _decode_utf8(raw: bytes, where: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        byte = raw[exc.start : exc.start + 1].hex()
        raise _invalid(f"{where}: not valid UTF-8 (byte 0x{byte} at position {exc.start})") from None


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NotJson(f"the number {text[:32]} is too large for a 64-bit float")
    return value


def _no_constant(name: str) -> float:
    raise _NotJson(f"{name} is not a JSON number; send null or a string")


class _NotJson(ValueError):
    """A value JSON's grammar admits but Fathom cannot take (said as the message)."""


# made once: ``json.loads`` with hooks builds a decoder and its scanner per call (1.5 µs of a 3 µs body)
_DECODER = json.JSONDecoder(parse_float=_finite, parse_constant=_no_constant)


def parse_json(raw: bytes | str, where: str = "body") -> Any:
    """The JSON value of ``raw``, or a 400 saying why it cannot be taken."""
    text = _decode_utf8(raw, where) if isinstance(raw, bytes) else raw
    try:
        if text.startswith("\ufeff"):  # as json.loads says it
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        value = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise _invalid(f"{where}: not valid JSON ({exc.msg} at position {exc.pos})") from None
    except RecursionError:
        raise _invalid(f"{where}: nested deeper than {MAX_DEPTH} levels") from None
    except _NotJson as exc:
        raise _invalid(f"{where}: {exc}") from None
    except ValueError:  # int(): more digits than Python converts
        raise _invalid(
            f"{where}: an integer has more than {MAX_INT_DIGITS} digits; send it as a string"
        ) from None
    # strict UTF-8 and strict JSON let NUL and lone surrogates in only as \u escapes
    check_storable(value, where, strings=_RISKY_ESCAPE.search(text) is not None)
    return value


def _problem(text: str) -> str | None:
    if text.isascii():
        if "\x00" not in text:
            return None
        found = "\x00"
    else:
        match = _UNSTORABLE.search(text)
        if match is None:
            return None
        found = match.group()
    if found == "\x00":
        return "contains a NUL character (\\u0000), which cannot be stored"
    return f"contains a lone surrogate (\\u{ord(found):04x}), which is not valid Unicode"


Trail = tuple[Any, str | int] | None  # (parent trail, key or index), rendered only on a refusal


def _render(where: str, trail: Trail) -> str:
    keys: list[str | int] = []
    while trail is not None:
        trail, key = trail
        keys.append(key)
    return where + "".join(f"[{key}]" if isinstance(key, int) else f".{key}" for key in reversed(keys))


def check_storable(value: Any, where: str = "body", *, strings: bool = True) -> None:
    """Refuse nesting beyond :data:`MAX_DEPTH` and (with ``strings``) strings, values or keys, that are
    not storable text. One quick pass; the path of a refusal is found by a second, slower one."""
    if not isinstance(value, dict | list):
        if strings and isinstance(value, str) and _problem(value):
            _locate(value, where)
        return
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth >= MAX_DEPTH:
            _locate(value, where)
        children = item.values() if isinstance(item, dict) else item
        if strings:
            if isinstance(item, dict) and any(_problem(key) for key in item):
                _locate(value, where)
            if any(isinstance(child, str) and _problem(child) for child in children):
                _locate(value, where)
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))


def _locate(value: Any, where: str) -> None:
    """Raise the 400 for the first problem in ``value``, naming where it is."""
    stack: list[tuple[Any, Trail, int]] = [(value, None, 0)]
    while stack:
        item, trail, depth = stack.pop()
        if isinstance(item, str):
            problem = _problem(item)
            if problem:
                raise _invalid(f"{_render(where, trail)}: {problem}")
        elif isinstance(item, dict | list):
            if depth >= MAX_DEPTH:
                raise _invalid(f"{where}: nested deeper than {MAX_DEPTH} levels (at {_render(where, trail)})")
            if isinstance(item, dict):
                for key, child in item.items():
                    problem = _problem(key)
                    if problem:
                        raise _invalid(f"{_render(where, trail)}: a key {problem}")
                    stack.append((child, (trail, key), depth + 1))
            else:
                stack.extend((child, (trail, index), depth + 1) for index, child in enumerate(item))
