"""Value coercion with JavaScript semantics, as FastGPT's runtime applies it.

``value_type_format`` converts a value to a node IO ``valueType``; ``js_truthy``, ``js_string`` and
``val_to_str`` reproduce the JavaScript conversions the engine relies on (``[]`` is truthy,
``String(1.0)`` is ``"1"``, objects stringify as compact JSON).
"""

from __future__ import annotations

import json
import math
from typing import Any

import json5

from fathom.json_values import js_truthy
from fathom.security.secrets import is_secret_value
from fathom.workflow.constants import ValueType

_ARRAY_PREFIX = "array"
_SPECIAL_LIST_TYPES = frozenset({ValueType.datasetQuote, ValueType.selectDataset, ValueType.selectApp})


def _js_json(value: Any) -> str:
    """``JSON.stringify`` for plain data (compact, non-ASCII kept)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _js_number_str(value: float | int) -> str:
    """``String(number)``: integral floats lose their ``.0``; NaN and infinities keep JS spelling."""
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
    return str(value)


def js_string(value: Any) -> str:
    """``String(value)`` for scalars; objects become compact JSON (as FastGPT does before ``String``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return _js_number_str(value)
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list, tuple)):
        return _js_json(value)
    return str(value)


def val_to_str(value: Any) -> str:
    """How a template substitution renders a value (FastGPT ``valToStr``): an unresolved value (undefined)
    renders as nothing, JSON for objects."""
    if value is None:
        return ""
    return js_string(value)


def js_number(value: Any) -> float | int:
    """``Number(value)``; integral results come back as ``int``."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        return value
    if value is None:
        return 0
    if isinstance(value, str):
        text = value.strip()
        if text == "":
            return 0
        try:
            if text.lower().startswith(("0x", "-0x")):
                result: float = float(int(text, 16))
            else:
                if text.lower() in {"nan", "inf", "-inf", "infinity", "+inf"}:
                    raise ValueError(text)
                result = float(text.replace("Infinity", "inf"))
        except ValueError:
            return math.nan
        return int(result) if result.is_integer() and abs(result) < 2**53 else result
    if isinstance(value, list):
        if not value:
            return 0
        if len(value) == 1:
            return js_number(js_string(value[0]))
    return math.nan


def _is_object_string(value: Any) -> bool:
    """A string that looks like a JSON object or array (``{…}`` / ``[…]`` after trimming)."""
    if not isinstance(value, str) or value in ("true", "false"):
        return False
    text = value.strip()
    return (text.startswith("{") and text.endswith("}")) or (text.startswith("[") and text.endswith("]"))


def parse_json5(text: str) -> Any:
    """Parse JSON5 (JSON first, for speed); raises ``ValueError`` on bad input."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return json5.loads(text)
    except Exception as exc:
        raise ValueError(str(exc)) from exc


def _already_typed(value: Any, value_type: str) -> bool:
    if value_type == ValueType.string:
        return isinstance(value, str)
    if value_type == ValueType.number:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if value_type == ValueType.boolean:
        return isinstance(value, bool)
    if value_type.startswith(_ARRAY_PREFIX):
        return isinstance(value, list)
    if value_type == ValueType.object:
        return isinstance(value, (dict, list))
    if value_type == ValueType.chatHistory:
        return isinstance(value, list) or (isinstance(value, (int, float)) and not isinstance(value, bool))
    if value_type in (ValueType.datasetQuote, ValueType.selectDataset):
        return isinstance(value, list)
    if value_type == ValueType.selectApp:
        return isinstance(value, (dict, list))
    return False


def _parse_or(value: Any, fallback: Any) -> Any:
    if _is_object_string(value):
        try:
            return parse_json5(value.strip())
        except ValueError:
            pass
    return fallback


def value_type_format(value: Any, value_type: str | None) -> Any:
    """Coerce ``value`` to ``value_type`` (FastGPT ``valueTypeFormat``)."""
    if value is None or not value_type or value_type == ValueType.any:
        return value
    if value_type == ValueType.string and is_secret_value(value):
        return value
    if _already_typed(value, value_type):
        return value
    if value_type == ValueType.string:
        return js_string(value)
    if value_type == ValueType.number:
        if value == "":
            return None
        return js_number(value)
    if value_type == ValueType.boolean:
        if isinstance(value, str):
            return value.lower() == "true"
        return js_truthy(value)
    if value_type == ValueType.object:
        return _parse_or(value, {})
    if value_type.startswith(_ARRAY_PREFIX):
        return _parse_or(value, [value])
    if value_type in _SPECIAL_LIST_TYPES or value_type == ValueType.chatHistory:
        return _parse_or(value, [])
    return value


def format_variable_val_by_type(value: Any, value_type: str | None) -> Any:
    """How a ``{{$node.output$}}`` reference reads an output: invalid shapes read as undefined."""
    if not value_type:
        return value
    if value is None:
        return None
    if value_type.startswith(_ARRAY_PREFIX) and not isinstance(value, list):
        return None
    if value_type == ValueType.boolean:
        return js_truthy(value)
    if value_type == ValueType.number:
        return js_number(value)
    if value_type == ValueType.string:
        return js_string(value)
    if value_type in (ValueType.object, *_SPECIAL_LIST_TYPES) and not isinstance(value, (dict, list)):
        return None
    return value


def js_coerce_string(value: Any) -> str:
    """JavaScript ``String(value)`` including arrays (``"1,2"``) and objects (``"[object Object]"``)."""
    if value is None:
        return "undefined"
    if isinstance(value, (list, tuple)):
        return ",".join("" if item is None else js_coerce_string(item) for item in value)
    if isinstance(value, dict):
        return "[object Object]"
    return js_string(value)
