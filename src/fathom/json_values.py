"""Copies of JSON-shaped values (dicts, lists, strings, numbers, booleans, None) for the hot path."""

from __future__ import annotations

import copy
from typing import Any


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
