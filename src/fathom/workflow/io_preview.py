"""What a node read and produced, for the editor's run panel (FastGPT ``mode: "test"``, the chat test).

``io_preview`` makes a JSON-safe, bounded copy: long strings are cut, long lists shortened, deep values
summarised, and values under names that look like credentials (keys, tokens, passwords, headers) are
replaced by ``"***"`` so a debug run never shows or stores a secret a node was given.
"""

from __future__ import annotations

import re
from typing import Any

MAX_TEXT = 2000
MAX_ITEMS = 20
MAX_DEPTH = 4
REDACTED = "***"
_SECRET_NAME = re.compile(
    r"(api[_-]?key|secret|password|passwd|authorization|cookie|header|bearer"
    r"|(?:access|api|auth|refresh)[_-]?token|^token$)",
    re.I,
)


def io_preview(value: Any, depth: int = 0) -> Any:
    """A bounded, JSON-safe view of ``value`` with credential-like fields redacted."""
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return value if len(value) <= MAX_TEXT else value[:MAX_TEXT] + f"… ({len(value)} characters)"
    if depth >= MAX_DEPTH:
        return f"<{type(value).__name__}>"
    if isinstance(value, dict):
        return {
            str(k): REDACTED if _SECRET_NAME.search(str(k)) else io_preview(v, depth + 1)
            for k, v in list(value.items())[:MAX_ITEMS]
        }
    if isinstance(value, list | tuple):
        items = [io_preview(v, depth + 1) for v in list(value)[:MAX_ITEMS]]
        if len(value) > MAX_ITEMS:
            items.append(f"… {len(value) - MAX_ITEMS} more")
        return items
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return io_preview(dump(by_alias=True, mode="json"), depth)
    return str(value)[:MAX_TEXT]
