"""Plain text, Markdown and CSV."""

from __future__ import annotations

import csv
import io

from fathom.knowledge.parse.tables import rows_to_markdown
from fathom.knowledge.parse.types import ParsedDocument

_ENCODINGS = ("utf-8-sig", "utf-16", "gb18030")


def decode_text(data: bytes) -> tuple[str, str]:
    """Decode bytes: BOM or UTF-8 first, then UTF-16 (with BOM), GB18030, finally Latin-1."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16"), "utf-16"
    for encoding in _ENCODINGS:
        if encoding == "utf-16":
            continue
        try:
            return data.decode(encoding), encoding
        except UnicodeDecodeError:
            continue
    return data.decode("latin-1"), "latin-1"


def parse_text(data: bytes, fmt: str) -> ParsedDocument:
    """``.txt`` and ``.md``: the text as is (decoded)."""
    text, encoding = decode_text(data)
    return ParsedDocument(text=text.replace("\r\n", "\n"), format=fmt, metadata={"encoding": encoding})


def parse_csv(data: bytes) -> ParsedDocument:
    """CSV (delimiter sniffed among ``, ; tab |``) as one Markdown table, first row the header."""
    text, encoding = decode_text(data)
    sample = text[:8192]
    try:
        dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(sample, delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel
    rows = list(csv.reader(io.StringIO(text), dialect))
    return ParsedDocument(
        text=rows_to_markdown(rows),
        format="csv",
        metadata={"encoding": encoding, "rows": len(rows), "delimiter": getattr(dialect, "delimiter", ",")},
    )
