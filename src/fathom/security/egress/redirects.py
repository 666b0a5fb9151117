"""Redirect rules of the safe outbound client (spec §6.2), as a pure function of request and response."""

from __future__ import annotations

import httpx

from .errors import EgressRedirectError

REDIRECT_STATUS_CODES = frozenset({301, 302, 303, 307, 308})
SENSITIVE_HEADERS = ("authorization", "cookie", "proxy-authorization")


def is_redirect(response: httpx.Response) -> bool:
    """A redirect the client follows: status 301/302/303/307/308 with a ``Location`` header."""
    return response.status_code in REDIRECT_STATUS_CODES and "location" in response.headers


def _redirect_url(current: httpx.URL, location: str) -> httpx.URL:
    """Resolve ``Location`` against the current URL; only http(s) targets are accepted."""
    if any(ch == "\\" or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in location):
        raise EgressRedirectError(f"Invalid redirect location: {location!r}")
    try:
        target = current.join(location)
    except httpx.InvalidURL as exc:
        raise EgressRedirectError(f"Invalid redirect location: {location!r} ({exc})") from None
    if target.scheme not in ("http", "https"):
        raise EgressRedirectError(f"Unsupported redirect protocol: {target.scheme}:")
    return target


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port


def build_redirect_request(request: httpx.Request, response: httpx.Response) -> httpx.Request:
    """The next hop's request.

    301/302 POST and 303 non-GET/HEAD become GET without body and ``content-*`` headers; 307/308 keep
    method and body; ``Host`` is always dropped (rebuilt from the new URL); a hop to another host,
    port or scheme drops ``authorization``, ``cookie`` and ``proxy-authorization``.
    """
    url = _redirect_url(request.url, response.headers["location"])
    method = request.method
    status = response.status_code
    switch_to_get = (status in (301, 302) and method == "POST") or (
        status == 303 and method not in ("GET", "HEAD")
    )
    cross_origin = _origin(url) != _origin(request.url)
    kept: list[tuple[str, str]] = [("Host", url.netloc.decode("ascii"))]
    for key, value in request.headers.multi_items():
        name = key.lower()
        if name == "host":
            continue  # replaced by the new URL's host
        if switch_to_get and (name.startswith("content-") or name == "transfer-encoding"):
            continue
        if cross_origin and name in SENSITIVE_HEADERS:
            continue
        kept.append((key, value))
    headers = httpx.Headers(kept)
    if switch_to_get:
        return httpx.Request("GET", url, headers=headers, extensions=request.extensions)
    return httpx.Request(method, url, headers=headers, stream=request.stream, extensions=request.extensions)
