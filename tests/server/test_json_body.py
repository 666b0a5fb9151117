"""The body reader's rules as a library: what it takes, what it refuses and where it says the problem is."""

from __future__ import annotations

import pytest

from fathom.server.errors import ApiError
from fathom.server.json_body import MAX_DEPTH, check_storable, parse_json


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        (b'{"a": "\\ud83d\\ude00"}', {"a": "\U0001f600"}),  # an escaped surrogate pair is one character
        (b'{"a": "\\\\u0000"}', {"a": "\\u0000"}),  # an escaped backslash, then the text u0000
        ('{"名": "中文"}'.encode(), {"名": "中文"}),
        (b"[" * MAX_DEPTH + b"]" * MAX_DEPTH, None),
    ],
    ids=["surrogate pair", "escaped backslash", "non-ASCII", "deepest allowed"],
)
def test_storable_json_is_taken(raw: bytes, value: object) -> None:
    parsed = parse_json(raw)
    if value is not None:
        assert parsed == value


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b'{"a": "\xe9"}', "body: not valid UTF-8 (byte 0xe9 at position 7)"),
        (b'{"a": "\xed\xa0\x80"}', "body: not valid UTF-8 (byte 0xed at position 7)"),  # raw surrogate
        (b'{"a": "x\x00"}', "body: not valid JSON (Invalid control character at"),
        (
            b'{"a": [{"b": "\\u0000"}]}',
            "body.a[0].b: contains a NUL character (\\u0000), which cannot be stored",
        ),
        (
            b'{"a": {"\\ud800": 1}}',
            "body.a: a key contains a lone surrogate (\\ud800), which is not valid Unicode",
        ),
        (b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1), f"body: nested deeper than {MAX_DEPTH} levels"),
        (b"[" * 100_000, f"body: nested deeper than {MAX_DEPTH} levels"),
        (b'{"a": ' + b"7" * 4301 + b"}", "body: an integer has more than 4300 digits; send it as a string"),
        (b'{"a": [NaN]}', "body: NaN is not a JSON number"),
        (b'{"a": -Infinity}', "body: -Infinity is not a JSON number"),
        (b'{"a": 1e999}', "body: the number 1e999 is too large for a 64-bit float"),
        (
            b'\xef\xbb\xbf{"a": 1}',
            "body: not valid JSON (Unexpected UTF-8 BOM (decode using utf-8-sig) at position 0)",
        ),
        (b'{"a": 1} {"b": 2}', "body: not valid JSON (Extra data at position 9)"),
    ],
    ids=[
        "latin-1 byte",
        "raw surrogate",
        "raw NUL",
        "escaped NUL",
        "surrogate key",
        "one too deep",
        "very deep",
        "huge integer",
        "NaN",
        "infinity",
        "float overflow",
        "byte order mark",
        "two documents",
    ],
)
def test_unstorable_json_is_refused_naming_where(raw: bytes, message: str) -> None:
    with pytest.raises(ApiError) as refused:
        parse_json(raw)
    assert refused.value.http_status == 400 and refused.value.status_text == "invalidParams"
    assert refused.value.message.startswith(message), refused.value.message


def test_query_values_are_checked_too() -> None:
    check_storable({"id": "x"}, "query")
    with pytest.raises(ApiError, match=r"query\.id: contains a NUL"):
        check_storable({"id": "x\x00"}, "query")
