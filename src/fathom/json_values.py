"""JSON-shaped values (dicts, lists, strings, numbers, booleans, None): copies for the hot path, and
JavaScript's truthiness, which FastGPT's rules are written in."""

from __future__ import annotations

import copy
import math
from typing import Any


def js_truthy(value: Any) -> bool:
    """JavaScript truthiness: only ``None``, ``False``, ``0``, ``NaN`` and ``""`` are false."""
    if value is None or value is False:
        return False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return not (value == 0 or (isinstance(value, float) and math.isnan(value)))
    if isinstance(value, str):
        return value != ""
    return True


def copy_json(value: Any) -> Any:
    """A deep copy of a JSON-shaped value at a fraction of ``copy.deepcopy``'s cost (a chat turn copies
    its query, history and the workflow's input values); anything else goes to ``copy.deepcopy``."""
    kind = type(value)
    if kind is dict:
        return {key: copy_json(item) for key, item in value.items()}
    if kind is list:
        return [copy_json(item) for item in value]
    if kind in (str, int, float, bool) or value is None:
        return value
    return copy.deepcopy(value)
