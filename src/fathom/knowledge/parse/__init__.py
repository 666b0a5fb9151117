"""Document parsing: bytes of a file to Markdown-ish text plus metadata.

``parse_document(data, filename)`` picks the parser from the file extension (or ``fmt``):
txt, md, html/htm, pdf, docx, pptx, xlsx/xlsm, csv. Errors are ``DocumentParseError`` subclasses
whose message names the file (``EncryptedDocumentError`` for password-protected files).
"""

from __future__ import annotations

from pathlib import Path

from fathom.knowledge.parse.html import parse_html
from fathom.knowledge.parse.office import parse_docx, parse_pptx
from fathom.knowledge.parse.pdf import parse_pdf
from fathom.knowledge.parse.plain import decode_text, parse_csv, parse_text
from fathom.knowledge.parse.sheets import parse_xlsx
from fathom.knowledge.parse.tables import rows_to_markdown
from fathom.knowledge.parse.types import (
    DocumentParseError,
    EncryptedDocumentError,
    ParsedDocument,
    UnsupportedFormatError,
)

_ALIASES = {"htm": "html", "markdown": "md", "xlsm": "xlsx", "text": "txt"}
SUPPORTED_FORMATS = ("txt", "md", "html", "pdf", "docx", "pptx", "xlsx", "csv")


def detect_format(filename: str) -> str:
    """The parser name for ``filename``'s extension (``''`` when it has none)."""
    ext = Path(filename).suffix.lower().lstrip(".")
    return _ALIASES.get(ext, ext)


def parse_document(
    data: bytes | Path, filename: str | None = None, *, fmt: str | None = None
) -> ParsedDocument:
    """Parse a file's bytes (or a path) into Markdown-ish text plus metadata (``filename``, ``format``…)."""
    if isinstance(data, Path):
        filename = filename or data.name
        data = data.read_bytes()
    name = filename or "document"
    kind = _ALIASES.get((fmt or "").lower(), (fmt or "").lower()) or detect_format(name)
    if kind in ("txt", "md"):
        parsed = parse_text(data, kind)
    elif kind == "html":
        parsed = parse_html(data)
    elif kind == "pdf":
        parsed = parse_pdf(data, name)
    elif kind == "docx":
        parsed = parse_docx(data, name)
    elif kind == "pptx":
        parsed = parse_pptx(data, name)
    elif kind == "xlsx":
        parsed = parse_xlsx(data, name)
    elif kind == "csv":
        parsed = parse_csv(data)
    else:
        raise UnsupportedFormatError(
            name, f"unsupported file type {kind or '(none)'!r}; supported: " + ", ".join(SUPPORTED_FORMATS)
        )
    return ParsedDocument(
        text=parsed.text, format=parsed.format, metadata={**parsed.metadata, "filename": name}
    )


__all__ = [
    "SUPPORTED_FORMATS",
    "DocumentParseError",
    "EncryptedDocumentError",
    "ParsedDocument",
    "UnsupportedFormatError",
    "decode_text",
    "detect_format",
    "parse_csv",
    "parse_document",
    "parse_docx",
    "parse_html",
    "parse_pdf",
    "parse_pptx",
    "parse_text",
    "parse_xlsx",
    "rows_to_markdown",
]
