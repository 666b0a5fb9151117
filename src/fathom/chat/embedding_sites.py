"""Which sites may show a share link's chat page in a frame (the widget and the iframe snippet).

A link's ``allowedOrigins`` are http(s) origins (``scheme://host[:port]``, no path). The share page is
answered with ``Content-Security-Policy: frame-ancestors 'self' <origins>``; a link with none may be
framed only by Fathom's own pages (``frame-ancestors 'self'`` and ``X-Frame-Options: SAMEORIGIN``),
so a link is embeddable nowhere else until its owner names a site.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

MAX_ORIGINS = 50
_HOST = re.compile(r"^(\[[0-9a-f:.]+\]|[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*)$")


class BadOrigin(ValueError):
    """An allowed origin that is not an http(s) origin; ``place`` is its index in the list sent."""

    def __init__(self, message: str, place: int | None = None) -> None:
        super().__init__(message)
        self.place = place


def _check_origin(text: str) -> str:
    """``text`` as an origin (lower case, without a trailing ``/``), or :class:`BadOrigin`."""
    value = text.strip().rstrip("/").lower()
    try:
        parts = urlsplit(value)
        port = parts.port  # a port that is not a number raises here
    except ValueError:
        parts, port = None, None
    if (
        parts is None
        or parts.scheme not in ("http", "https")
        or not parts.hostname
        or not _HOST.match(parts.hostname)
        or parts.path
        or parts.query
        or parts.fragment
        or parts.username is not None
        or "*" in value
    ):
        raise BadOrigin(f"{text!r} is not an http(s) origin like https://example.com or http://host:8080")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{parts.scheme}://{host}" + (f":{port}" if port is not None else "")


def check_origins(texts: list[str]) -> tuple[str, ...]:
    """The origins, checked and without repeats (in their order); :class:`BadOrigin` gives the first
    bad one's place."""
    if len(texts) > MAX_ORIGINS:
        raise BadOrigin(f"at most {MAX_ORIGINS} origins, got {len(texts)}")
    seen: dict[str, None] = {}
    for place, text in enumerate(texts):
        try:
            seen[_check_origin(text)] = None
        except BadOrigin as exc:
            raise BadOrigin(str(exc), place) from None
    return tuple(seen)


def frame_headers(origins: tuple[str, ...]) -> dict[str, str]:
    """The headers that let exactly these origins (and Fathom itself) frame the share page."""
    if not origins:
        return {"Content-Security-Policy": "frame-ancestors 'self'", "X-Frame-Options": "SAMEORIGIN"}
    return {"Content-Security-Policy": "frame-ancestors 'self' " + " ".join(origins)}
