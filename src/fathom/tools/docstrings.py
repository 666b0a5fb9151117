"""Read a function's summary and per-parameter descriptions from its docstring.

Understands Google (``Args:``), Sphinx (``:param x:``) and NumPy (``Parameters`` + dashes) styles.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field

__all__ = ["DocInfo", "parse_docstring"]

_GOOGLE_SECTIONS = {"args", "arguments", "parameters", "params", "keyword args", "kwargs"}
_OTHER_SECTIONS = {
    "returns",
    "return",
    "raises",
    "yields",
    "examples",
    "example",
    "notes",
    "note",
    "see also",
    "attributes",
}
_SPHINX_PARAM = re.compile(r"^:param\s+(?:[^:]*\s)?(\w+):\s*(.*)$")
_GOOGLE_ITEM = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_NUMPY_ITEM = re.compile(r"^(\w+)\s*(?::.*)?$")


@dataclass
class DocInfo:
    """The summary (text before the first section) and ``{param: description}``."""

    summary: str = ""
    params: dict[str, str] = field(default_factory=dict)


def _section_name(line: str) -> str | None:
    text = line.strip().rstrip(":").lower()
    if line.strip().endswith(":") and (text in _GOOGLE_SECTIONS or text in _OTHER_SECTIONS):
        return text
    return None


def parse_docstring(doc: str | None) -> DocInfo:
    """Parse ``doc`` (already a ``__doc__`` string, possibly ``None``)."""
    if not doc:
        return DocInfo()
    lines = inspect.cleandoc(doc).splitlines()
    info = DocInfo()
    summary: list[str] = []
    section: str | None = None
    current: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if nxt and set(nxt) == {"-"} and stripped:  # NumPy section header
            section = "numpy-params" if stripped.lower() in _GOOGLE_SECTIONS else "other"
            current = None
            i += 2
            continue
        sphinx = _SPHINX_PARAM.match(stripped)
        if sphinx:
            current = sphinx.group(1)
            info.params[current] = sphinx.group(2).strip()
            section = "sphinx"
            i += 1
            continue
        if stripped.startswith(":"):
            section, current = "other", None
            i += 1
            continue
        name = _section_name(line) if not line.startswith((" ", "\t")) else None
        if name is not None:
            section = "google-params" if name in _GOOGLE_SECTIONS else "other"
            current = None
            i += 1
            continue
        if section is None:
            summary.append(line)
        elif section == "google-params" and stripped:
            indent = len(line) - len(line.lstrip())
            item = _GOOGLE_ITEM.match(stripped)
            if item and (current is None or indent <= _base_indent(lines, i)):
                current = item.group(1).lstrip("*")
                info.params[current] = item.group(2).strip()
            elif current is not None:
                info.params[current] = (info.params[current] + " " + stripped).strip()
        elif section == "numpy-params" and stripped:
            if not line.startswith((" ", "\t")):
                item = _NUMPY_ITEM.match(stripped)
                current = item.group(1) if item else None
                if current is not None:
                    info.params[current] = ""
            elif current is not None:
                info.params[current] = (info.params[current] + " " + stripped).strip()
        elif section == "sphinx" and stripped and current is not None and line.startswith((" ", "\t")):
            info.params[current] = (info.params[current] + " " + stripped).strip()
        i += 1
    info.summary = "\n".join(summary).strip()
    return info


def _base_indent(lines: list[str], index: int) -> int:
    """Indent of the first item line of the Google section that contains ``index``."""
    j = index
    while j > 0 and _section_name(lines[j - 1]) is None:
        j -= 1
    for line in lines[j : index + 1]:
        if line.strip():
            return len(line) - len(line.lstrip())
    return 0
