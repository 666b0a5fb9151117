"""What an OpenAI-compatible endpoint sends besides its status: a streamed completion's SSE events (each
``data:`` one JSON chunk, up to ``data: [DONE]``; an ``error`` object in place of a chunk ends it), and
the JSON error body of a failed request. One decoder, fed bytes as they arrive, serves both stream paths
(``fathom.llm.http_stream`` and the SDK's for proxied endpoints); one reader of error bodies serves both
error translations (``http_stream`` and ``retry`` for the SDK's errors)."""

from __future__ import annotations

from typing import Any

from fathom import json_text
from fathom.llm.errors import EndpointStreamError


class SSEDecoder:
    """Splits the bytes of an SSE body into its JSON chunks; ``done`` once ``[DONE]`` came."""

    def __init__(self) -> None:
        self._pending = b""
        self._data: list[bytes] = []
        self.done = False

    def feed(self, piece: bytes) -> list[dict[str, Any]]:
        """The chunks completed by ``piece`` (none after ``[DONE]``: the rest is only read to its end)."""
        if self.done:
            return []
        self._pending += piece
        if b"\n" not in piece:
            return []
        *lines, self._pending = self._pending.split(b"\n")
        chunks = []
        for line in lines:
            if line.endswith(b"\r"):
                line = line[:-1]
            if line.startswith(b"data:"):
                self._data.append(line[6:] if line.startswith(b"data: ") else line[5:])
            elif not line and self._data:
                chunk = self._decode()
                if chunk is None:
                    self.done = True
                    break
                chunks.append(chunk)
        return chunks

    def finish(self) -> list[dict[str, Any]]:
        """The last chunk of a body that ended without a blank line after it."""
        if self.done:
            return []
        if self._pending.startswith(b"data:"):
            self._data.append(self._pending[6:] if self._pending.startswith(b"data: ") else self._pending[5:])
        chunk = self._decode() if self._data else None
        return [] if chunk is None else [chunk]

    def _decode(self) -> dict[str, Any] | None:
        text = self._data[0] if len(self._data) == 1 else b"\n".join(self._data)
        self._data.clear()
        if text.startswith(b"[DONE]"):
            return None
        try:
            payload = json_text.loads(text)
        except ValueError as exc:
            raise EndpointStreamError(f"the stream sent a chunk that is not JSON: {text[:80]!r}") from exc
        if isinstance(payload, dict) and payload.get("error"):
            error = payload["error"]
            message = error.get("message") if isinstance(error, dict) else None
            raise EndpointStreamError(
                message if isinstance(message, str) and message else "An error occurred during streaming"
            )
        return payload if isinstance(payload, dict) else {}


def error_message(body: Any) -> str | None:
    """The text of an endpoint's JSON error body: ``error.message``, a plain ``error`` string, or a
    top-level ``message``; None when it has none."""
    if not isinstance(body, dict):
        return None
    error = body.get("error", body)
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    return error if isinstance(error, str) else None
