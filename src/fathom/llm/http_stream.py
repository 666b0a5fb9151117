"""A lean HTTP/1.1 client for streamed chat completions: one POST, an OpenAI-style SSE answer.

The ``openai`` SDK and httpx cost 1.7-4.5x its client CPU per streamed completion, and h11 alone for the
framing 1.17-1.49x (``benchmarks/model_client_cpu.py``, ``docs/benchmarks.md``). This client does only
what a streamed completion needs: keep-alive connections pooled per endpoint (plain TCP or TLS), the
request written in one call, the answer read in whatever pieces the socket gives, chunked or
length-framed bodies decoded in one pass; the SSE events are :class:`fathom.llm.wire.SSEDecoder`'s (the
SDK path's too). Endpoints behind a proxy from the environment or with a query string go through the SDK.

Timeouts: ``connect_timeout`` for the connection, ``read_timeout`` for each read (a slow model may take
long overall, but never that long between two pieces). A connection taken from the pool that turns out
closed before the answer began is replaced once by a new one. Failures are
:class:`~fathom.llm.errors.EndpointError`\\ s, which :func:`fathom.llm.retry.to_model_error` words like
the SDK's.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import time
import urllib.request
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any
from urllib.parse import urlsplit
from urllib.request import getproxies_environment

from fathom import json_text
from fathom.llm.byte_pipe import BytePipe
from fathom.llm.errors import EndpointError, EndpointStatusError, EndpointTimeout, EndpointUnreachable
from fathom.llm.wire import SSEDecoder, error_message

MAX_HEAD = 64 * 1024
MAX_ERROR_BODY = 1024 * 1024
MAX_IDLE_SECONDS = 30.0
MAX_IDLE_CONNECTIONS = 128


def _uses_proxy(base_url: str) -> bool:
    """Whether the environment routes ``base_url`` through a proxy (``HTTP(S)_PROXY``, ``NO_PROXY``)."""
    parts = urlsplit(base_url)
    proxies = getproxies_environment()
    if not (proxies.get(parts.scheme) or proxies.get("all")):
        return False
    return not urllib.request.proxy_bypass_environment(parts.hostname or "", proxies)  # type: ignore[attr-defined]


def streamable(base_url: str) -> bool:
    """Whether this client can serve ``base_url``: http(s), no query string, no proxy in the way."""
    parts = urlsplit(base_url)
    return (
        parts.scheme in {"http", "https"}
        and bool(parts.hostname)
        and not parts.query
        and not (_uses_proxy(base_url))
    )


class _Connection:
    __slots__ = ("pipe", "idle_since")

    def __init__(self, pipe: BytePipe) -> None:
        self.pipe = pipe
        self.idle_since = 0.0

    def usable(self, now: float) -> bool:
        return self.pipe.usable() and now - self.idle_since < MAX_IDLE_SECONDS

    def close(self) -> None:
        self.pipe.close()


class StreamingEndpoint:
    """POSTs JSON to one endpoint's ``{base_url}{path}`` and reads the SSE answer; pools connections."""

    def __init__(
        self,
        base_url: str,
        *,
        headers: Mapping[str, str],
        connect_timeout: float,
        read_timeout: float,
        ssl_context: Callable[[], ssl.SSLContext],
    ) -> None:
        parts = urlsplit(base_url)
        self._tls = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port or (443 if self._tls else 80)
        self._prefix = parts.path.rstrip("/")
        default_port = self._port == (443 if self._tls else 80)
        netloc = f"[{self._host}]" if ":" in self._host else self._host
        self._authority = netloc if default_port else f"{netloc}:{self._port}"
        self._headers = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._ssl_context = ssl_context
        self._idle: list[_Connection] = []

    async def aclose(self) -> None:
        """Close the pooled connections."""
        idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()

    async def post_sse(self, path: str, body: Mapping[str, Any]) -> SSEResponse:
        """Send the request and read the answer's head; raise :class:`EndpointStatusError` for a non-2xx
        answer (its body read for the error message), else return the response to read events from."""
        payload = json_text.dumps_bytes(body)
        head = (
            f"POST {self._prefix}{path} HTTP/1.1\r\nHost: {self._authority}\r\n{self._headers}"
            f"Content-Type: application/json\r\nAccept: text/event-stream\r\nAccept-Encoding: identity\r\n"
            f"Content-Length: {len(payload)}\r\n\r\n"
        ).encode("latin-1")
        request = head + payload
        for _ in range(2):
            connection, reused = await self._connection()
            response = SSEResponse(self, connection)
            try:
                connection.pipe.write(request)
                await response.read_head()
            except EndpointUnreachable:
                connection.close()
                if reused and not response.received:  # the pooled connection was stale: a new one
                    continue
                raise
            except BaseException:
                connection.close()
                raise
            if response.status >= 300:
                await response.raise_status()
            return response
        raise EndpointUnreachable("the endpoint closed the connection before answering")  # pragma: no cover

    async def _connection(self) -> tuple[_Connection, bool]:
        now = time.monotonic()
        while self._idle:
            connection = self._idle.pop()
            if connection.usable(now):
                return connection, True
            connection.close()
        try:
            async with asyncio.timeout(self._connect_timeout):
                pipe = await BytePipe.open(
                    self._host,
                    self._port,
                    tls=self._ssl_context() if self._tls else None,
                    server_hostname=self._host if self._tls else None,
                )
        except TimeoutError as exc:
            raise EndpointTimeout(f"connecting to {self._authority} timed out") from exc
        except OSError as exc:
            raise EndpointUnreachable(str(exc) or type(exc).__name__) from exc
        return _Connection(pipe), False

    def _release(self, connection: _Connection) -> None:
        if len(self._idle) < MAX_IDLE_CONNECTIONS and connection.pipe.usable():
            connection.idle_since = time.monotonic()
            self._idle.append(connection)
        else:
            connection.close()


class SSEResponse:
    """One answer: status and headers, then its SSE ``data:`` payloads as parsed JSON objects."""

    def __init__(self, endpoint: StreamingEndpoint, connection: _Connection) -> None:
        self._endpoint = endpoint
        self._connection: _Connection | None = connection
        self._buffer = b""
        self.received = False
        self.status = 0
        self.headers: dict[str, str] = {}
        self._keep_alive = True
        self._chunked = False
        self._left: int | None = None  # body bytes left (Content-Length), None: chunked or until close
        self._body_done = False

    async def _read(self) -> bytes:
        assert self._connection is not None
        try:
            data = await self._connection.pipe.read(self._endpoint._read_timeout)
        except TimeoutError as exc:
            raise EndpointTimeout("no data from the endpoint within the read timeout") from exc
        except OSError as exc:
            raise EndpointUnreachable(str(exc) or type(exc).__name__) from exc
        if data:
            self.received = True
        return data

    async def read_head(self) -> None:
        """Read the status line and headers."""
        assert self._connection is not None
        try:
            await self._connection.pipe.drain()
        except OSError as exc:
            raise EndpointUnreachable(str(exc) or type(exc).__name__) from exc
        buffer = b""
        while (end := buffer.find(b"\r\n\r\n")) < 0:
            if len(buffer) > MAX_HEAD:
                raise EndpointUnreachable("the endpoint's response head is too long")
            data = await self._read()
            if not data:
                raise EndpointUnreachable("the endpoint closed the connection before answering")
            buffer += data
        lines = buffer[:end].decode("latin-1").split("\r\n")
        self._buffer = buffer[end + 4 :]
        version, _, rest = lines[0].partition(" ")
        try:
            self.status = int(rest[:3])
        except ValueError:
            raise EndpointUnreachable(f"not an HTTP response: {lines[0][:80]!r}") from None
        for line in lines[1:]:
            name, _, value = line.partition(":")
            key = name.strip().lower()
            value = value.strip()
            self.headers[key] = f"{self.headers[key]}, {value}" if key in self.headers else value
        connection = self.headers.get("connection", "").lower()
        self._keep_alive = "close" not in connection and (version != "HTTP/1.0" or "keep-alive" in connection)
        self._chunked = "chunked" in self.headers.get("transfer-encoding", "").lower()
        length = self.headers.get("content-length")
        if not self._chunked and length is not None and length.strip().isdigit():
            self._left = int(length)
        elif not self._chunked:
            self._keep_alive = False  # the body ends when the connection does
        if self.status in (204, 304):
            self._left = 0

    async def _body(self) -> AsyncIterator[bytes]:
        """The body's bytes as they arrive (chunked framing removed)."""
        if self._chunked:
            async for piece in self._dechunk():
                yield piece
        elif self._left is not None:
            data, self._buffer = self._buffer, b""
            while True:
                if data:
                    piece = data[: self._left]
                    self._left -= len(piece)
                    yield piece
                if self._left <= 0:
                    break
                data = await self._read()
                if not data:
                    raise EndpointUnreachable("the endpoint closed the connection before the answer ended")
        else:
            data, self._buffer = self._buffer, b""
            while True:
                if data:
                    yield data
                data = await self._read()
                if not data:
                    break
        self._body_done = True

    async def _dechunk(self) -> AsyncIterator[bytes]:
        buffer, self._buffer = self._buffer, b""
        while True:
            while (line_end := buffer.find(b"\r\n")) < 0:
                buffer += await self._more()
            size_text = buffer[:line_end].split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise EndpointUnreachable(f"bad chunk size {size_text[:20]!r}") from None
            buffer = buffer[line_end + 2 :]
            if size == 0:
                while not buffer.startswith(b"\r\n") and b"\r\n\r\n" not in buffer:  # trailers
                    buffer += await self._more()
                end = 2 if buffer.startswith(b"\r\n") else buffer.index(b"\r\n\r\n") + 4
                self._buffer = buffer[end:]
                return
            while size > 0:
                if not buffer:
                    buffer = await self._more()
                piece, buffer = buffer[:size], buffer[size:]
                size -= len(piece)
                yield piece
            while len(buffer) < 2:
                buffer += await self._more()
            buffer = buffer[2:]

    async def _more(self) -> bytes:
        data = await self._read()
        if not data:
            raise EndpointUnreachable("the endpoint closed the connection before the answer ended")
        return data

    async def raise_status(self) -> None:
        """Read the (bounded) error body and raise it as an :class:`EndpointStatusError`."""
        parts: list[bytes] = []
        size = 0
        try:
            async for piece in self._body():
                parts.append(piece)
                size += len(piece)
                if size > MAX_ERROR_BODY:
                    break
        except EndpointError:
            pass
        finally:
            await self.aclose()
        raise EndpointStatusError(self.status, _error_message(b"".join(parts), self.status), self.headers)

    async def events(self) -> AsyncIterator[dict[str, Any]]:
        """The JSON objects of the stream up to ``[DONE]`` (the rest of the body is read, so the
        connection can be used again); an ``error`` object raises ``EndpointStreamError``."""
        decoder = SSEDecoder()
        async for piece in self._body():
            for chunk in decoder.feed(piece):
                yield chunk
        for chunk in decoder.finish():
            yield chunk

    async def aclose(self) -> None:
        """Give the connection back to the pool when the answer was read to its end, else close it."""
        connection, self._connection = self._connection, None
        if connection is None:
            return
        if self._body_done and self._keep_alive and not self._buffer:
            self._endpoint._release(connection)
        else:
            connection.close()


def _error_message(body: bytes, status: int) -> str:
    """The endpoint's error text: that of a JSON error body, else the body itself (shortened), else the
    status."""
    text = body.decode("utf-8", "replace").strip()
    try:
        parsed = json.loads(text) if text else None
    except ValueError:
        parsed = None
    return error_message(parsed) or text[:500] or f"Error code: {status}"
