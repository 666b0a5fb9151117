"""Parser results and errors."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fathom.knowledge.parse.images import EmbeddedImage


@dataclass(frozen=True)
class ParsedDocument:
    """Markdown-ish text of a document plus what is known about it (format, pages, sheets, title…)."""

    text: str
    format: str
    metadata: dict[str, Any] = field(default_factory=dict)
    # embedded images taken out of the text (parsed with ``images=True``): referenced by ``image:<key>``
    images: tuple[EmbeddedImage, ...] = ()


class DocumentParseError(ValueError):
    """A document could not be read; the message names the file and the reason."""

    def __init__(self, filename: str, reason: str) -> None:
        super().__init__(f"{filename}: {reason}")
        self.filename = filename
        self.reason = reason


class EncryptedDocumentError(DocumentParseError):
    """The document is password-protected."""

    def __init__(self, filename: str) -> None:
        super().__init__(
            filename, "the file is encrypted (password-protected); remove the password and upload it again"
        )


class UnsupportedFormatError(DocumentParseError):
    """No parser for this file type."""
