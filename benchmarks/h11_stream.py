"""The streaming client of ``fathom.llm.http_stream`` with h11 doing the HTTP/1.1 framing (a contender of
``model_client_cpu.py``, not a product path).

What "use a maintained library for the framing" costs: h11 (the protocol library under httpx and uvicorn)
parses the status, the headers and chunked, length-framed or close-delimited bodies, and decides whether
the connection may be kept; the pooling, timeouts and SSE decoding are the product client's. It passes
the product client's tests (``tests/llm/test_chat_model_http_stream.py``, retries, stream) when swapped
in, and is 226 lines against the product client's 340: its cost is h11's two ``next_event`` calls per
SSE chunk (~9 us each) and the request's header validation.
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

import h11

from fathom.llm.errors import EndpointStatusError, EndpointTimeout, EndpointUnreachable
from fathom.llm.wire import SSEDecoder, error_message

MAX_ERROR_BODY = 1024 * 1024
MAX_IDLE_SECONDS = 30.0
MAX_IDLE_CONNECTIONS = 128
_Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter, h11.Connection, float]


def streamable(base_url: str) -> bool:
    """Whether this client can serve ``base_url``: http(s), no query string, no proxy in the way."""
    parts = urlsplit(base_url)
    proxies = urllib.request.getproxies_environment()
    proxied = bool(
        proxies.get(parts.scheme) or proxies.get("all")
    ) and not urllib.request.proxy_bypass_environment(  # type: ignore[attr-defined]
        parts.hostname or "", proxies
    )
    return parts.scheme in {"http", "https"} and bool(parts.hostname) and not parts.query and not proxied


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
        self._tls, self._host, self._prefix = (
            parts.scheme == "https",
            parts.hostname or "",
            parts.path.rstrip("/"),
        )
        self._port = parts.port or (443 if self._tls else 80)
        self._authority = parts.netloc.rpartition("@")[2]
        self._headers = [
            *headers.items(),
            ("Content-Type", "application/json"),
            ("Accept", "text/event-stream"),
            ("Accept-Encoding", "identity"),
        ]
        self._connect_timeout, self.read_timeout, self._ssl_context = (
            connect_timeout,
            read_timeout,
            ssl_context,
        )
        self._idle: list[_Connection] = []

    async def aclose(self) -> None:
        """Close the pooled connections."""
        idle, self._idle = self._idle, []
        for connection in idle:
            connection[1].close()

    async def post_sse(self, path: str, body: Mapping[str, Any]) -> SSEResponse:
        """Send the request and read the answer's head; raise :class:`EndpointStatusError` for a non-2xx
        answer (its body read for the error message), else return the response to read events from."""
        payload = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        headers = [("Host", self._authority), *self._headers, ("Content-Length", str(len(payload)))]
        for _ in range(2):
            (reader, writer, http, _), reused = await self._connection()
            request = h11.Request(method="POST", target=f"{self._prefix}{path}", headers=headers)
            response = SSEResponse(self, reader, writer, http)
            try:
                writer.write(
                    http.send(request) + http.send(h11.Data(data=payload)) + http.send(h11.EndOfMessage())
                )
                await writer.drain()
                await response.read_head()
            except (EndpointUnreachable, OSError) as exc:
                writer.close()
                if reused and not response.received:  # the pooled connection was stale: a new one
                    continue
                raise exc if isinstance(exc, EndpointUnreachable) else EndpointUnreachable(str(exc)) from exc
            except BaseException:
                writer.close()
                raise
            if response.status >= 300:
                await response.raise_status()
            return response
        raise EndpointUnreachable("the endpoint closed the connection before answering")  # pragma: no cover

    async def _connection(self) -> tuple[_Connection, bool]:
        while self._idle:
            connection = self._idle.pop()
            reader, writer, _, idle_since = connection
            if (
                not (reader.at_eof() or writer.is_closing())
                and time.monotonic() - idle_since < MAX_IDLE_SECONDS
            ):
                return connection, True
            connection[1].close()
        try:
            async with asyncio.timeout(self._connect_timeout):
                reader, writer = await asyncio.open_connection(
                    self._host, self._port, ssl=self._ssl_context() if self._tls else None
                )
        except TimeoutError as exc:
            raise EndpointTimeout(f"connecting to {self._authority} timed out") from exc
        except OSError as exc:
            raise EndpointUnreachable(str(exc) or type(exc).__name__) from exc
        return (reader, writer, h11.Connection(h11.CLIENT), 0.0), False


class SSEResponse:
    """One answer: status and headers, then its SSE ``data:`` payloads as parsed JSON objects."""

    def __init__(
        self,
        endpoint: StreamingEndpoint,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        http: Any,
    ) -> None:
        self._endpoint, self._reader, self._writer, self._http = endpoint, reader, writer, http
        self.received, self.status, self.headers, self._closed = False, 0, {}, False

    async def _next(self) -> Any:
        """h11's next event, reading from the socket while it needs data."""
        while (event := self._http.next_event()) is h11.NEED_DATA:
            try:
                async with asyncio.timeout(self._endpoint.read_timeout):
                    data = await self._reader.read(65536)
            except TimeoutError as exc:
                raise EndpointTimeout("no data from the endpoint within the read timeout") from exc
            except OSError as exc:
                raise EndpointUnreachable(str(exc) or type(exc).__name__) from exc
            self.received = self.received or bool(data)
            self._http.receive_data(data)
        return event

    async def read_head(self) -> None:
        """Read the status line and headers."""
        try:
            event = await self._next()
        except h11.RemoteProtocolError as exc:
            raise EndpointUnreachable(f"not an HTTP response, or closed before answering: {exc}") from None
        self.status = event.status_code
        for name, value in event.headers:
            key, text = name.decode(), value.decode("latin-1")
            self.headers[key] = f"{self.headers[key]}, {text}" if key in self.headers else text

    async def _body(self) -> AsyncIterator[bytes]:
        """The body's bytes as they arrive (framing removed)."""
        try:
            while type(event := await self._next()) is h11.Data:
                yield event.data
        except h11.RemoteProtocolError as exc:
            raise EndpointUnreachable(
                f"the endpoint closed the connection before the answer ended: {exc}"
            ) from None

    async def raise_status(self) -> None:
        """Read the (bounded) error body and raise it as an :class:`EndpointStatusError`."""
        body = b""
        try:
            async for piece in self._body():
                body += piece
                if len(body) > MAX_ERROR_BODY:
                    break
        except (EndpointUnreachable, EndpointTimeout):
            pass
        finally:
            await self.aclose()
        text = body.decode("utf-8", "replace").strip()
        try:
            parsed = json.loads(text) if text else None
        except ValueError:
            parsed = None
        message = error_message(parsed) or text[:500] or f"Error code: {self.status}"
        raise EndpointStatusError(self.status, message, self.headers)

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
        if self._closed:
            return
        self._closed, http, endpoint = True, self._http, self._endpoint
        reusable = http.our_state is h11.DONE and http.their_state is h11.DONE and not http.trailing_data[0]
        if reusable and len(endpoint._idle) < MAX_IDLE_CONNECTIONS:
            http.start_next_cycle()
            endpoint._idle.append((self._reader, self._writer, http, time.monotonic()))
        else:
            self._writer.close()
