"""JSON text as Fathom writes it (the stream, the stored columns, model requests) and reads it back
(fathom.json_text): the same text ``json.dumps(ensure_ascii=False, separators=(",", ":"))`` writes, read back
to the same value, and for what the fast encoder refuses, ``json``'s answer (written or raised) as before."""

from __future__ import annotations

import dataclasses
import json
import math
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fathom import json_text


def _reference(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# JSON values as the chat writes them: text with any character a UTF-8 text can hold (CJK, emoji, control
# characters, U+2028), integers a JavaScript reader keeps exact, finite floats Python prints without an
# exponent (for the others the two texts differ in form, ``1e-05`` / ``0.00001``, not in number: below)
_TEXT = st.text(st.characters(exclude_categories=("Cs",)))
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.integers(min_value=-(2**40), max_value=2**40).map(lambda n: n / 64)
    | _TEXT
)
_VALUES = st.recursive(
    _SCALARS,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(_TEXT, children, max_size=5),
    max_leaves=30,
)


@given(_VALUES)
def test_the_text_is_what_json_dumps_writes_compact_with_non_ascii_kept(value: Any) -> None:
    assert json_text.dumps(value) == _reference(value)
    assert json_text.dumps_bytes(value) == _reference(value).encode()


@given(_VALUES)
def test_what_is_written_reads_back_to_the_same_value(value: Any) -> None:
    assert json_text.loads(json_text.dumps(value)) == value
    assert json_text.loads(json_text.dumps_bytes(value)) == value


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False)))
def test_every_finite_float_is_written_as_the_same_number_any_json_reader_reads(numbers: list[float]) -> None:
    assert json.loads(json_text.dumps(numbers)) == numbers
    assert json_text.loads(json_text.dumps_bytes(numbers)) == numbers


@given(_VALUES)
def test_reading_any_json_text_gives_what_json_loads_gives(value: Any) -> None:
    for text in (json.dumps(value), json.dumps(value, ensure_ascii=False, indent=2)):
        assert json_text.loads(text) == json.loads(text)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ({"中文": "知识库 ✓", "emoji": "🙂"}, '{"中文":"知识库 ✓","emoji":"🙂"}'),
        ({"line": 'a\u2028b\nc\td"e\\'}, '{"line":"a\u2028b\\nc\\td\\"e\\\\"}'),
        ([1, -0.5, True, None, ""], '[1,-0.5,true,null,""]'),
        # what orjson refuses goes to json, which writes it as it always did
        ({1: "int key"}, '{"1":"int key"}'),
        ({"big": 2**70}, '{"big":1180591620717411303424}'),
    ],
    ids=["non-ascii-kept", "escapes", "scalars", "int-keys-fall-back", "big-int-falls-back"],
)
def test_vectors(value: Any, text: str) -> None:
    assert json_text.dumps(value) == text
    assert json_text.dumps_bytes(value) == text.encode()


def test_nan_and_infinity_are_written_null_which_every_json_reader_accepts() -> None:
    # json writes NaN / Infinity, which PostgreSQL's jsonb and JavaScript's JSON.parse refuse
    assert json_text.dumps({"score": math.nan, "top": math.inf}) == '{"score":null,"top":null}'


def test_text_json_wrote_with_nan_still_reads() -> None:
    value = json_text.loads('{"score":NaN,"top":Infinity}')
    assert math.isnan(value["score"]) and value["top"] == math.inf


def test_an_integer_beyond_64_bits_reads_as_javascript_reads_it_a_float() -> None:
    # FastGPT's JSON.parse gives the same double; json.loads would keep the exact integer
    value = json_text.loads('{"n":1180591620717411303424}')["n"]
    assert isinstance(value, float) and value == 2.0**70


@dataclasses.dataclass
class _Point:
    x: int


@pytest.mark.parametrize(
    "value", [{"at": datetime(2026, 12, 6, tzinfo=UTC)}, {"point": _Point(1)}, {"set": {1, 2}}], ids=repr
)
def test_values_json_cannot_write_are_refused_as_before_not_written_silently(value: Any) -> None:
    with pytest.raises(TypeError):
        json_text.dumps(value)
    with pytest.raises(TypeError):
        json_text.dumps_bytes(value)


def test_text_that_is_not_json_is_refused_with_a_value_error() -> None:
    with pytest.raises(ValueError):
        json_text.loads('{"a":')
