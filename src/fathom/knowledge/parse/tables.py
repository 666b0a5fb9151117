"""Rows to Markdown tables (spreadsheets, CSV, Word and PowerPoint tables)."""

from __future__ import annotations

from collections.abc import Sequence


def _cell(value: object) -> str:
    if value is None:
        return ""
    text = str(value).replace("\r\n", "\n").replace("\n", " ").replace("|", "\\|")
    return " ".join(text.split())


def rows_to_markdown(rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table whose first row is the header; short rows are padded, empty rows dropped."""
    cleaned = [[_cell(v) for v in row] for row in rows]
    cleaned = [row for row in cleaned if any(row)]
    if not cleaned:
        return ""
    width = max(len(row) for row in cleaned)
    # drop columns that are empty in every row
    keep = [c for c in range(width) if any(c < len(row) and row[c] for row in cleaned)]
    table = [[row[c] if c < len(row) else "" for c in keep] for row in cleaned]
    header, body = table[0], table[1:]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("-" for _ in header) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    return "\n".join(lines)
