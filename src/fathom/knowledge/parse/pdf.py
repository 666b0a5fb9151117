"""PDF text with pypdf, page by page. Encrypted files give ``EncryptedDocumentError``."""

from __future__ import annotations

import contextlib
import io
import logging
from collections.abc import Iterator

from fathom.knowledge.parse.types import DocumentParseError, EncryptedDocumentError, ParsedDocument

log = logging.getLogger(__name__)


@contextlib.contextmanager
def _quiet_pypdf() -> Iterator[None]:
    """pypdf logs a warning per odd font or xref; keep those out of the application log."""
    logger = logging.getLogger("pypdf")
    previous = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(previous)


def parse_pdf(data: bytes, filename: str) -> ParsedDocument:
    """See ``_parse_pdf``."""
    with _quiet_pypdf():
        return _parse_pdf(data, filename)


def _parse_pdf(data: bytes, filename: str) -> ParsedDocument:
    """Text of every page joined by blank lines; metadata has ``pages`` and ``title`` when known.

    A PDF protected by an owner password only (opens with an empty user password) is read; one that
    needs a password to open raises ``EncryptedDocumentError`` naming the file."""
    from pypdf import PdfReader
    from pypdf.errors import FileNotDecryptedError, PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            try:
                opened = reader.decrypt("")
            except (FileNotDecryptedError, NotImplementedError, _DependencyError_()) as exc:
                raise EncryptedDocumentError(filename) from exc
            if not opened:
                raise EncryptedDocumentError(filename)
        pages: list[str] = []
        for number, page in enumerate(reader.pages, start=1):
            try:
                pages.append((page.extract_text() or "").strip())
            except Exception as exc:  # a broken page must not lose the rest of the document
                log.warning("%s: page %d unreadable: %s", filename, number, exc)
                pages.append("")
        metadata: dict[str, object] = {"pages": len(pages)}
        try:
            info = reader.metadata
            if info and info.title:
                metadata["title"] = "".join(ch for ch in str(info.title) if ch.isprintable()).strip()
        except Exception:  # unreadable metadata is not a reason to fail
            pass
    except FileNotDecryptedError as exc:
        raise EncryptedDocumentError(filename) from exc
    except (PdfReadError, ValueError, KeyError, TypeError) as exc:
        if isinstance(exc, DocumentParseError):
            raise
        raise DocumentParseError(filename, f"not a readable PDF ({exc})") from exc
    return ParsedDocument(text="\n\n".join(p for p in pages if p), format="pdf", metadata=metadata)


def _DependencyError_() -> type[Exception]:  # noqa: N802 - returns an exception class for except clauses
    """pypdf's missing-crypto-library error (AES needs ``cryptography``)."""
    from pypdf.errors import DependencyError

    return DependencyError
