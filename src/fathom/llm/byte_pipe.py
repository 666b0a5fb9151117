"""One TCP (or TLS) connection's bytes for one reader at a time, as :mod:`fathom.llm.http_stream` reads them.

asyncio's ``StreamReader`` / ``StreamWriter`` pair, with an ``asyncio.timeout`` around every read, cost a
one-chunk streamed completion's client ~23 µs more CPU than this on uvloop, ~65 µs on asyncio's loop
(``docs/benchmarks.md``): a read that finds bytes
already received takes them all at once, with no future and no timer; a read that must wait has one
timer, set on its own future. Bytes held past :data:`MAX_BUFFERED` pause the socket's reading until the
reader catches up, as the stream reader's limit did; a write buffer above the transport's high-water mark
is waited out by :meth:`BytePipe.drain`.
"""

from __future__ import annotations

import asyncio
import ssl
from typing import cast

MAX_BUFFERED = 256 * 1024


class BytePipe(asyncio.Protocol):
    """The protocol of one connection: what arrived, the end, and the error that ended it."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self._buffer = bytearray()
        self._waiter: asyncio.Future[None] | None = None  # a read's, or drain's
        self._ended = False  # the peer's end of the stream, or the connection lost
        self._error: BaseException | None = None
        self._reading_paused = False
        self._writing_paused = False

    @classmethod
    async def open(
        cls, host: str, port: int, *, tls: ssl.SSLContext | None, server_hostname: str | None
    ) -> BytePipe:
        """A new connection (``OSError`` when it cannot be made)."""
        loop = asyncio.get_running_loop()
        _, pipe = await loop.create_connection(cls, host, port, ssl=tls, server_hostname=server_hostname)
        return pipe

    # -- the transport's calls --------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass of asyncio's

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        if not self._reading_paused and len(self._buffer) > MAX_BUFFERED and self.transport is not None:
            self._reading_paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self._ended = True
        self._wake()
        return False  # nothing more to send either: the transport closes

    def connection_lost(self, exc: Exception | None) -> None:
        self._ended = True
        if exc is not None:
            self._error = exc
        self._writing_paused = False
        self._wake()

    def pause_writing(self) -> None:
        self._writing_paused = True

    def resume_writing(self) -> None:
        self._writing_paused = False
        self._wake()

    # -- the reader's calls -----------------------------------------------------------------------

    def usable(self) -> bool:
        """Open both ways, nothing unread: a pooled connection that may carry the next request."""
        transport = self.transport
        return transport is not None and not self._ended and not self._buffer and not transport.is_closing()

    def write(self, data: bytes) -> None:
        assert self.transport is not None
        self.transport.write(data)

    async def drain(self) -> None:
        """Wait while the transport holds more unsent bytes than its high-water mark; the connection's
        error raised (``OSError``)."""
        while self._writing_paused and not self._ended:
            await self._wait(None)
        if self._error is not None:
            raise self._error

    async def read(self, timeout: float) -> bytes:  # noqa: ASYNC109 - a timer on the one future it waits on
        """Every byte received and not read yet, waiting up to ``timeout`` seconds for one (``TimeoutError``);
        ``b""`` at the end of the stream; the error that ended the connection raised once all is read."""
        if not self._buffer and not self._ended:
            await self._wait(timeout)
        if self._buffer:
            data = bytes(self._buffer)
            self._buffer.clear()
            if self._reading_paused and self.transport is not None:
                self._reading_paused = False
                self.transport.resume_reading()
            return data
        if self._error is not None:
            raise self._error
        return b""

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    async def _wait(self, timeout: float | None) -> None:  # noqa: ASYNC109 - see read
        loop = asyncio.get_running_loop()
        waiter = self._waiter = loop.create_future()
        timer = None if timeout is None else loop.call_later(timeout, _time_out, waiter)
        try:
            await waiter
        finally:
            if timer is not None:
                timer.cancel()
            self._waiter = None

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


def _time_out(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(TimeoutError())
