"""A small JSONPath subset for the HTTP node's outputs: ``$.a.b``, ``$.a[0]``, ``$['a b']``,
``$.a[*].b``, ``$..b`` (recursive descent) and negative indices."""

from __future__ import annotations

import re
from typing import Any

_TOKEN = re.compile(r"\.\.|\.(\*|[^.\[\]]+)|\[\s*(\*|-?\d+|'[^']*'|\"[^\"]*\")\s*\]")
_ARRAY_RESULT = re.compile(r"[*]|\[[:?]|\.\.|,")


def _children(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return list(value.values())
    if isinstance(value, list):
        return list(value)
    return []


def _descendants(value: Any) -> list[Any]:
    found = [value]
    for child in _children(value):
        found.extend(_descendants(child))
    return found


def _select(value: Any, key: str) -> list[Any]:
    if key == "*":
        return _children(value)
    if isinstance(value, list):
        if re.fullmatch(r"-?\d+", key):
            index = int(key)
            if -len(value) <= index < len(value):
                return [value[index]]
        return []
    if isinstance(value, dict) and key in value:
        return [value[key]]
    return []


def _jsonpath_query(path: str, data: Any) -> list[Any]:
    """All matches of ``path`` in ``data`` (an unsupported path matches nothing)."""
    if not path.startswith("$"):
        path = "$." + path
    rest = path[1:]
    current = [data]
    position = 0
    descend = False
    while position < len(rest):
        match = _TOKEN.match(rest, position)
        if match is None:
            return []
        position = match.end()
        if match.group(0) == "..":
            descend = True
            continue
        key = match.group(1) if match.group(1) is not None else match.group(2)
        if key.startswith(("'", '"')):
            key = key[1:-1]
        if descend:
            current = [d for item in current for d in _descendants(item)]
            descend = False
        current = [found for item in current for found in _select(item, key)]
    return current


def read_output(key: str, data: Any) -> Any:
    """The HTTP node's output value for ``key`` (a JSONPath or a plain field name): a list when the
    path can match several values, else the first match, else ``None``."""
    path = key if key.startswith("$") else f"$.{key}"
    matches = _jsonpath_query(path, data)
    if not matches:
        return None
    return matches if _ARRAY_RESULT.search(path) else matches[0]
