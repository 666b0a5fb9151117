"""A small HTTP/1.1 server on asyncio streams, run in a background thread (test and demo use only).

It speaks just enough HTTP for the ``openai`` SDK and httpx: keep-alive, Content-Length and chunked
request bodies, plain and chunked (streamed) responses, and it notices when a client hangs up
mid-stream so tests can assert that cancellation really closed the connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from http import HTTPStatus

MAX_HEADER_BYTES = 64 * 1024


@dataclass
class HttpRequest:
    """One received request. ``disconnected`` is set if the client hung up before the response ended."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    disconnected: threading.Event = field(default_factory=threading.Event, repr=False)


@dataclass
class HttpResponse:
    """A complete response, or a streamed one when ``stream`` is given (sent chunked)."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    stream: AsyncIterator[bytes] | None = None


Handler = Callable[[HttpRequest], Awaitable[HttpResponse]]


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    if headers.get("transfer-encoding", "").lower() == "chunked":
        parts: list[bytes] = []
        while True:
            size = int((await reader.readline()).split(b";")[0].strip() or b"0", 16)
            if size == 0:
                await reader.readline()
                return b"".join(parts)
            parts.append(await reader.readexactly(size))
            await reader.readline()
    length = int(headers.get("content-length", "0") or 0)
    return await reader.readexactly(length) if length else b""


def _head(status: int, headers: dict[str, str]) -> bytes:
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = "Status"
    lines = [f"HTTP/1.1 {status} {phrase}"] + [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


class BackgroundHttpServer:
    """Serve ``handler`` on ``host:port`` (port 0 = any free port) from a daemon thread."""

    def __init__(self, handler: Handler, host: str = "127.0.0.1", port: int = 0) -> None:
        self._handler = handler
        self._host = host
        self._port = port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self.port = 0

    def start(self) -> None:
        """Start listening; returns once the port is bound."""
        if self._thread is not None:
            return
        self._ready.clear()
        self._error = None
        self._thread = threading.Thread(target=self._run, name="fathom-scripted-http", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            raise RuntimeError(f"server failed to start: {self._error}") from self._error

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            self._server = loop.run_until_complete(
                asyncio.start_server(self._connection, self._host, self._port, limit=MAX_HEADER_BYTES)
            )
            self.port = self._server.sockets[0].getsockname()[1]
        except BaseException as exc:  # report bind errors to start()
            self._error = exc
            self._ready.set()
            loop.close()
            return
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    def stop(self) -> None:
        """Close the listener and every open connection, then stop the thread."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return

        async def shutdown() -> None:
            if self._server is not None:
                self._server.close()
            for writer in list(self._writers):
                writer.close()  # the connection task sees EOF and ends on its own
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            if tasks:
                _, pending = await asyncio.wait(tasks, timeout=2)
                for task in pending:
                    task.cancel()
                await asyncio.gather(*pending, return_exceptions=True)

        if not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                asyncio.run_coroutine_threadsafe(shutdown(), loop).result(timeout=5)
            loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5)
        self._thread = None
        self._loop = None

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                method, path, _version = (lines[0].split(" ", 2) + ["", ""])[:3]
                headers: dict[str, str] = {}
                for line in lines[1:]:
                    if ":" in line:
                        name, value = line.split(":", 1)
                        headers[name.strip().lower()] = value.strip()
                body = await _read_body(reader, headers)
                request = HttpRequest(method=method, path=path, headers=headers, body=body)
                response = await self._handler(request)
                keep_alive = headers.get("connection", "").lower() != "close"
                if not await self._send(reader, writer, request, response, keep_alive):
                    return
                if not keep_alive:
                    return
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            return  # asyncio's stream callback must not see a cancelled task
        finally:
            self._writers.discard(writer)
            writer.close()

    async def _send(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        request: HttpRequest,
        response: HttpResponse,
        keep_alive: bool,
    ) -> bool:
        headers = dict(response.headers)
        headers["connection"] = "keep-alive" if keep_alive else "close"
        if response.stream is None:
            headers["content-length"] = str(len(response.body))
            writer.write(_head(response.status, headers) + response.body)
            await writer.drain()
            return True
        headers["transfer-encoding"] = "chunked"
        writer.write(_head(response.status, headers))
        iterator = response.stream
        watcher = asyncio.ensure_future(reader.read(1))
        try:
            while True:
                next_piece = asyncio.ensure_future(iterator.__anext__())
                await asyncio.wait({next_piece, watcher}, return_when=asyncio.FIRST_COMPLETED)
                if not next_piece.done():
                    # The client sent EOF (hung up) or unexpected bytes while we were streaming.
                    next_piece.cancel()
                    await asyncio.gather(next_piece, return_exceptions=True)
                    request.disconnected.set()
                    return False
                try:
                    piece = next_piece.result()
                except StopAsyncIteration:
                    break
                if piece:
                    writer.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                    await writer.drain()
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            return True
        except ConnectionError:
            request.disconnected.set()
            return False
        finally:
            if not watcher.done():
                watcher.cancel()
                await asyncio.gather(watcher, return_exceptions=True)
            elif not watcher.cancelled():
                watcher.exception()  # a client that reset the connection: retrieved, not an error here
            aclose = getattr(iterator, "aclose", None)
            if aclose is not None:
                with contextlib.suppress(Exception):
                    await aclose()
