"""The guarded HTTP client: an ``httpx.AsyncClient`` whose every hop goes through the egress guard.

Use it exactly like ``httpx.AsyncClient`` (``request``, ``get``, ``post``, ..., ``stream`` as an async
context manager). Differences, all deliberate:

* redirects are followed by this class, not by httpx (default on, at most ``policy.max_redirects``,
  per request ``follow_redirects=False`` returns the 3xx as is; ``extensions={"max_redirects": n}``
  lowers the limit), each hop re-checked, with the rewriting rules of spec §6.2;
* bodies are limited to ``max_bytes`` (wire bytes while streaming, decoded bytes when the client reads
  the whole body); ``extensions={"max_bytes": n}`` overrides it per request;
* no proxies, no environment settings, and no cookie persistence between requests (one client is
  shared by many users: a cookie set for one must not be sent for another).
"""

from __future__ import annotations

import ssl
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import Any

import httpcore
import httpx
from httpx._client import USE_CLIENT_DEFAULT, UseClientDefault
from httpx._types import AuthTypes

from .errors import EgressDenied, EgressRedirectError, EgressSizeError
from .redirects import build_redirect_request, is_redirect
from .target import UrlChecker, reject_ambiguous_url
from .transport import GuardedTransport, request_max_bytes

MAX_REDIRECTS_EXTENSION = "max_redirects"


def _no_cookie_jar() -> CookieJar:
    return CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))


class GuardedAsyncClient(httpx.AsyncClient):
    """``httpx.AsyncClient`` bound to an :class:`EgressGuard`; build it with ``guard.client()``."""

    def __init__(
        self,
        guard: UrlChecker,
        *,
        headers: dict[str, str] | None = None,
        timeout: httpx.Timeout | float | None = None,
        max_bytes: int | None = None,
        follow_redirects: bool = True,
        verify: ssl.SSLContext | bool = True,
        base_url: str = "",
        network_backend: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        self._guard = guard
        self._max_bytes = max_bytes
        super().__init__(
            headers=headers,
            timeout=timeout if timeout is not None else guard.policy.timeout,
            follow_redirects=follow_redirects,
            transport=GuardedTransport(
                guard, verify=verify, max_bytes=max_bytes, network_backend=network_backend
            ),
            trust_env=False,
            base_url=base_url,
        )
        self.cookies = _no_cookie_jar()

    def build_request(self, method: str, url: httpx.URL | str, **kwargs: Any) -> httpx.Request:
        """As ``httpx``, but text URLs are screened like ``guard.check_url`` screens them, and a URL
        httpx cannot parse becomes :class:`EgressDenied` (one parser, one verdict)."""
        if isinstance(url, str):
            reject_ambiguous_url(url)
        try:
            return super().build_request(method, url, **kwargs)
        except httpx.InvalidURL as exc:
            raise EgressDenied(f"Invalid URL {str(url)!r}: {exc}", url=str(url)) from None

    @property
    def guard(self) -> UrlChecker:
        """The guard every request of this client goes through."""
        return self._guard

    async def send(
        self,
        request: httpx.Request,
        *,
        stream: bool = False,
        auth: AuthTypes | UseClientDefault | None = USE_CLIENT_DEFAULT,
        follow_redirects: bool | UseClientDefault = USE_CLIENT_DEFAULT,
    ) -> httpx.Response:
        """Send ``request``, following redirects through the guard, then read the body unless streaming."""
        follow = self.follow_redirects if isinstance(follow_redirects, UseClientDefault) else follow_redirects
        limit = int(request.extensions.get(MAX_REDIRECTS_EXTENSION, self._guard.policy.max_redirects))
        history: list[httpx.Response] = []
        hop_auth: AuthTypes | UseClientDefault | None = auth
        while True:
            response = await super().send(request, stream=True, auth=hop_auth, follow_redirects=False)
            if not follow or limit == 0 or not is_redirect(response):
                break
            try:
                if len(history) >= limit:
                    raise EgressRedirectError(f"Maximum redirects exceeded: {limit}", request=request)
                next_request = build_redirect_request(request, response)
            except EgressRedirectError as exc:
                exc.request = request
                await response.aclose()
                raise
            await response.aclose()
            history.append(response)
            request = next_request
            hop_auth = None  # credentials of the first hop travel only as headers, filtered per hop
        response.history = list(history)
        if not stream:
            try:
                await self._read_limited(response)
            except BaseException:
                await response.aclose()
                raise
        return response

    async def _read_limited(self, response: httpx.Response) -> None:
        """Read the whole body, counting decoded bytes against the limit (a gzip bomb stops early)."""
        limit = request_max_bytes(response.request, self._max_bytes)
        if limit is None:
            await response.aread()
            return
        chunks: list[bytes] = []
        total = 0
        async for chunk in response.aiter_bytes():
            total += len(chunk)
            if total > limit:
                raise EgressSizeError(limit, request=response.request)
            chunks.append(chunk)
        response._content = b"".join(chunks)
