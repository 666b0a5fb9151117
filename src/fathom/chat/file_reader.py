"""Reading a run's files (``readFiles`` node): download through the egress guard, parse to text.

The URL's path extension (else its Content-Type) picks the parser; anything unsupported is an error
naming the file and the supported formats. Sizes are bounded by the guard's ``max_bytes``. A signed
preview link of this server (a chat upload) is read from the file store, after the same signature,
expiry and team checks the preview route makes, instead of over HTTP.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import unquote, urlparse

from fathom.chat.chat_files import ChatFiles, filename_of
from fathom.knowledge.parse import SUPPORTED_FORMATS, detect_format, parse_document

#: the document formats a chat file may be read as (the read-files node parses them)
DOCUMENT_FORMATS = SUPPORTED_FORMATS

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

    def __init__(
        self, http_client: Callable[[], Any], chat_files: ChatFiles | None = None, team_id: str | None = None
    ) -> None:
        self._client = http_client
        self._chat_files = chat_files
        self._team_id = team_id

    async def read_file(self, url: str) -> dict[str, str]:
        if self._chat_files is not None and self._chat_files.is_preview_url(url):
            record, data = await self._chat_files.open_preview(url, self._team_id)
            return await self._parse(filename_of(record.name, record), data, record.content_type)
        name = unquote(PurePosixPath(urlparse(url).path).name) or url
        client = self._client()
        if client is None:
            raise RuntimeError("reading files needs the outbound HTTP client (egress guard)")
        response = await client.get(url)
        response.raise_for_status()
        return await self._parse(name, response.content, response.headers.get("content-type", ""))

    async def _parse(self, name: str, data: bytes, content_type: str) -> dict[str, str]:
        fmt = detect_format(name)
        if fmt not in SUPPORTED_FORMATS:
            fmt = _CONTENT_TYPES.get(content_type.split(";")[0].strip().lower(), fmt)
        if fmt not in SUPPORTED_FORMATS:
            raise ValueError(f"{name}: unsupported file type; supported: {', '.join(SUPPORTED_FORMATS)}")
        parsed = await asyncio.to_thread(parse_document, data, name, fmt=fmt)
        return {"name": name, "text": parsed.text}
