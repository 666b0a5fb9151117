"""Question/answer pairs from a table (FastGPT's CSV import, ``parseCsvTable2Chunks``): one chunk per row,
the first column its question (``q``), the second its answer (``a``); rows without a question are dropped.
A first row naming the columns (``q,a``, ``question,answer``, FastGPT's ``index,content``, ``问题,答案``)
is a header, not a pair."""

from __future__ import annotations

import csv
import io

_HEADER_CELLS = {"q", "question", "questions", "index", "问题", "问", "query"}


def split_qa_pairs(text: str) -> list[tuple[str, str]]:
    """The (question, answer) rows of CSV text (delimiter sniffed among ``, ; tab |``)."""
    sample = text[:8192]
    try:
        dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(sample, delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel
    rows = [row for row in csv.reader(io.StringIO(text), dialect) if any(cell.strip() for cell in row)]
    if rows and rows[0][0].strip().lower() in _HEADER_CELLS:
        rows = rows[1:]
    pairs = []
    for row in rows:
        q = row[0].strip()
        a = row[1].strip() if len(row) > 1 else ""
        if q:
            pairs.append((q, a))
    return pairs
