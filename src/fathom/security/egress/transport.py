"""The guarded httpx transport: checks each request, connects only to the checked (pinned) IPs.

DNS pinning: the request keeps its host name (so the ``Host`` header, TLS SNI and certificate
verification use the name), but the network backend is handed the address the guard checked
instead of resolving the name again. The checked target travels from ``handle_async_request`` to the
backend's ``connect_tcp`` in a context variable, which is per task, so concurrent requests cannot see
each other's pins. A connection attempted without a matching pin is refused (fail closed).
"""

from __future__ import annotations

import functools
import ssl
import typing
from collections.abc import AsyncIterator, Iterable
from contextvars import ContextVar

import httpcore
import httpx

from .errors import EgressDenied, EgressSizeError
from .target import CheckedTarget, UrlChecker

MAX_BYTES_EXTENSION = "max_bytes"

_PIN: ContextVar[CheckedTarget | None] = ContextVar("fathom_egress_pin", default=None)


class PinnedNetworkBackend(httpcore.AsyncNetworkBackend):
    """Connects to the addresses of the current :class:`CheckedTarget` instead of resolving names."""

    def __init__(self, inner: httpcore.AsyncNetworkBackend | None = None) -> None:
        self._inner = inner if inner is not None else httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        local_address: str | None = None,
        socket_options: Iterable[typing.Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        target = _PIN.get()
        if target is None or target.host != host:
            raise EgressDenied(f"Refused connection to {host}:{port}: it was not checked by the egress guard")
        failure: Exception | None = None
        for address in target.addresses:
            try:
                return await self._inner.connect_tcp(
                    address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        assert failure is not None  # a CheckedTarget always holds at least one address
        raise failure

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        socket_options: Iterable[typing.Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise EgressDenied(f"Refused connection to unix socket {path}")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class _LimitedStream(httpx.AsyncByteStream):
    """Counts body bytes off the wire and raises :class:`EgressSizeError` past ``max_bytes``."""

    def __init__(self, inner: httpx.AsyncByteStream, max_bytes: int, request: httpx.Request) -> None:
        self._inner = inner
        self._max_bytes = max_bytes
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        total = 0
        async for chunk in self._inner:
            total += len(chunk)
            if total > self._max_bytes:
                raise EgressSizeError(self._max_bytes, request=self._request)
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


def request_max_bytes(request: httpx.Request, default: int | None) -> int | None:
    """The size limit for ``request``: ``extensions={"max_bytes": n}`` overrides the client's."""
    value = request.extensions.get(MAX_BYTES_EXTENSION, default)
    return value if value is None else int(value)


@functools.cache
def _ssl_context(verify: bool) -> ssl.SSLContext:
    """One shared context per verify mode: loading the CA bundle costs tens of milliseconds."""
    return httpx.create_ssl_context(verify)


class GuardedTransport(httpx.AsyncHTTPTransport):
    """An ``httpx`` transport that runs every request through an :class:`EgressGuard`.

    No proxies and no environment settings (``trust_env`` is off): a proxy would connect on our behalf
    to an address nobody checked. HTTP/1.1 only.
    """

    def __init__(
        self,
        guard: UrlChecker,
        *,
        verify: ssl.SSLContext | bool = True,
        max_bytes: int | None = None,
        limits: httpx.Limits = httpx.Limits(max_connections=100, max_keepalive_connections=20),
        network_backend: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        ssl_context = verify if isinstance(verify, ssl.SSLContext) else _ssl_context(verify)
        super().__init__(verify=ssl_context, trust_env=False, limits=limits)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl_context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            http1=True,
            http2=False,
            network_backend=PinnedNetworkBackend(network_backend),
        )
        self._guard = guard
        self._max_bytes = max_bytes

    @property
    def guard(self) -> UrlChecker:
        """The guard this transport enforces."""
        return self._guard

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Check the target, send pinned to the checked addresses, and wrap the body in the size limit."""
        try:
            target = await self._guard.check(request.url)
        except EgressDenied as exc:
            exc.request = request
            raise
        token = _PIN.set(target)
        try:
            response = await super().handle_async_request(request)
        finally:
            _PIN.reset(token)
        max_bytes = request_max_bytes(request, self._max_bytes)
        if max_bytes is not None:
            length = response.headers.get("content-length", "")
            if length.isdigit() and int(length) > max_bytes:
                await response.aclose()
                raise EgressSizeError(max_bytes, request=request)
            stream = typing.cast(httpx.AsyncByteStream, response.stream)
            response.stream = _LimitedStream(stream, max_bytes, request)
        return response
