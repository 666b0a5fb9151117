"""Reading a run's files (``readFiles`` node): download through the egress guard, parse to text.

The URL's path extension (else its Content-Type) picks the parser; anything unsupported is an error
naming the file and the supported formats. Sizes are bounded by the guard's ``max_bytes``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import unquote, urlparse

from fathom.knowledge.parse import SUPPORTED_FORMATS, detect_format, parse_document

_CONTENT_TYPES = {
    "application/pdf": "pdf",
    "text/html": "html",
    "text/markdown": "md",
    "text/plain": "txt",
    "text/csv": "csv",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": "pptx",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
}


class ExternalFileReader:
    """``FileReader`` for the workflow: ``await read_file(url) -> {name, text}``."""

    def __init__(self, http_client: Callable[[], Any]) -> None:
        self._client = http_client

    async def read_file(self, url: str) -> dict[str, str]:
        name = unquote(PurePosixPath(urlparse(url).path).name) or url
        client = self._client()
        if client is None:
            raise RuntimeError("reading files needs the outbound HTTP client (egress guard)")
        response = await client.get(url)
        response.raise_for_status()
        fmt = detect_format(name)
        if fmt not in SUPPORTED_FORMATS:
            content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
            fmt = _CONTENT_TYPES.get(content_type, fmt)
        if fmt not in SUPPORTED_FORMATS:
            raise ValueError(f"{name}: unsupported file type; supported: {', '.join(SUPPORTED_FORMATS)}")
        parsed = await asyncio.to_thread(parse_document, response.content, name, fmt=fmt)
        return {"name": name, "text": parsed.text}
