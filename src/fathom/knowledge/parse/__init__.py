"""Document parsing: bytes of a file to Markdown-ish text plus metadata.

``parse_document(data, filename)`` picks the parser from the file extension (or ``fmt``):
txt, md, html/htm, pdf, docx, pptx, xlsx/xlsm, csv. Errors are ``DocumentParseError`` subclasses
whose message names the file (``EncryptedDocumentError`` for password-protected files).
"""

from __future__ import annotations

from pathlib import Path

from fathom.knowledge.parse.html import parse_html
from fathom.knowledge.parse.images import (
    IMAGE_FORMATS,
    IMAGE_MIME,
    EmbeddedImage,
    extract_data_url_images,
    image_keys,
    image_of,
    unescape_refs,
)
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
    data: bytes | Path, filename: str | None = None, *, fmt: str | None = None, images: bool = False
) -> ParsedDocument:
    """Parse a file's bytes (or a path) into Markdown-ish text plus metadata (``filename``, ``format``…).
    With ``images``, the images embedded in a txt/md/html (``data:`` URLs), docx or pptx document are
    taken out of the text as ``![](image:<key>)`` references and returned in ``images`` (linked ones never
    are)."""
    if isinstance(data, Path):
        filename = filename or data.name
        data = data.read_bytes()
    name = filename or "document"
    kind = _ALIASES.get((fmt or "").lower(), (fmt or "").lower()) or detect_format(name)
    if kind in ("txt", "md"):
        parsed = parse_text(data, kind)
    elif kind == "html" and images:
        markup, found = extract_data_url_images(decode_text(data)[0])
        parsed = parse_html(markup)
        return ParsedDocument(
            unescape_refs(parsed.text),
            parsed.format,
            {**parsed.metadata, "filename": name},
            images=tuple(found),
        )
    elif kind == "html":
        parsed = parse_html(data)
    elif kind == "pdf":
        parsed = parse_pdf(data, name)
    elif kind == "docx":
        parsed = parse_docx(data, name, images=images)
    elif kind == "pptx":
        parsed = parse_pptx(data, name, images=images)
    elif kind == "xlsx":
        parsed = parse_xlsx(data, name)
    elif kind == "csv":
        parsed = parse_csv(data)
    else:
        raise UnsupportedFormatError(
            name, f"unsupported file type {kind or '(none)'!r}; supported: " + ", ".join(SUPPORTED_FORMATS)
        )
    if images and kind in ("txt", "md"):
        text, found = extract_data_url_images(parsed.text)
        parsed = ParsedDocument(text, parsed.format, parsed.metadata, images=tuple(found))
    return ParsedDocument(
        text=parsed.text,
        format=parsed.format,
        metadata={**parsed.metadata, "filename": name},
        images=parsed.images,
    )


__all__ = [
    "IMAGE_FORMATS",
    "IMAGE_MIME",
    "EmbeddedImage",
    "extract_data_url_images",
    "image_keys",
    "image_of",
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
