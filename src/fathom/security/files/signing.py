"""Signed, expiring preview URLs for private files (HMAC-SHA-256, constant-time verification)."""

from __future__ import annotations

import hmac
import time
from collections.abc import Callable
from hashlib import sha256
from urllib.parse import parse_qs, quote, urlsplit

from fathom.security.files.refs import PREVIEW_URL_EXPIRES_SECONDS
from fathom.security.secrets import derive_secret_key

PREVIEW_PATH = "/api/files/preview"


class PreviewUrlError(Exception):
    """A preview URL is malformed, forged or expired."""


class PreviewUrlSigner:
    """Makes and checks ``{base}/api/files/preview?key=..&expires=..&sign=..`` URLs.

    The signature covers the key and the expiry time with a key derived from the settings secret key,
    so a URL cannot be retargeted to another file nor extended.
    """

    def __init__(
        self,
        secret_key: str | bytes,
        base_url: str,
        *,
        expires_seconds: int = PREVIEW_URL_EXPIRES_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._key = derive_secret_key(secret_key, info=b"file preview urls")
        self.base_url = base_url.rstrip("/")
        self.expires_seconds = expires_seconds
        self._clock = clock

    def _sign(self, key: str, expires: int) -> str:
        return hmac.new(self._key, f"{key}\n{expires}".encode(), sha256).hexdigest()

    def sign(self, key: str) -> str:
        """A preview URL for ``key`` valid for ``expires_seconds`` from now."""
        expires = int(self._clock()) + self.expires_seconds
        return (
            f"{self.base_url}{PREVIEW_PATH}?key={quote(key, safe='')}"
            f"&expires={expires}&sign={self._sign(key, expires)}"
        )

    async def __call__(self, key: str) -> str:
        """Async form, usable as ``get_preview_url``."""
        return self.sign(key)

    def verify(self, url: str) -> str:
        """The object key of a valid, unexpired preview URL; :class:`PreviewUrlError` otherwise."""
        query = parse_qs(urlsplit(url).query)
        try:
            key = query["key"][0]
            expires = int(query["expires"][0])
            signature = query["sign"][0]
        except (KeyError, IndexError, ValueError):
            raise PreviewUrlError("Preview URL is malformed") from None
        expected = self._sign(key, expires).encode()
        # bytes: compare_digest refuses str with non-ASCII characters (a TypeError, not a refusal)
        if not hmac.compare_digest(expected, signature.encode("utf-8", "surrogateescape")):
            raise PreviewUrlError("Preview URL signature is invalid")
        if self._clock() > expires:
            raise PreviewUrlError("Preview URL has expired")
        return key
