"""Errors raised by the egress guard.

All of them derive from :class:`httpx.RequestError`, so code that treats the guarded client as an
``httpx.AsyncClient`` and catches ``httpx.HTTPError`` also catches a refusal. None of them is an
``httpx.TransportError``: retry logic that retries transport failures never retries a refusal.
"""

from __future__ import annotations

import httpx

#: FastGPT's rejection text (spec §6.1.6); every address refusal starts with it.
PRIVATE_URL_TEXT = "Request to private network not allowed"

#: The settings that widen the policy, named in refusal messages.
ALLOW_CIDRS_SETTING = "FATHOM_EGRESS_ALLOW_CIDRS"
ALLOW_HOSTS_SETTING = "FATHOM_EGRESS_ALLOW_HOSTS"


class EgressError(httpx.RequestError):
    """Base class: the guarded client refused or aborted an outbound request."""

    def __init__(self, message: str, *, request: httpx.Request | None = None) -> None:
        super().__init__(message, request=request)
        self.message = message

    def __str__(self) -> str:
        return self.message


class EgressDenied(EgressError):
    """The target is not allowed: bad scheme, unparseable or ambiguous URL, or a blocked address.

    ``address`` is the blocked IP (canonical text) when the refusal is about an address, ``host`` the
    host as written in the URL, ``setting`` the setting that would allow it (``None`` when nothing can).
    """

    def __init__(
        self,
        message: str,
        *,
        url: str = "",
        host: str = "",
        address: str | None = None,
        setting: str | None = None,
        request: httpx.Request | None = None,
    ) -> None:
        super().__init__(message, request=request)
        self.url = url
        self.host = host
        self.address = address
        self.setting = setting


class EgressRedirectError(EgressError):
    """A redirect could not be followed (``Unsupported redirect protocol: {p}``,
    ``Maximum redirects exceeded: {n}``, or an unparseable ``Location``)."""


class EgressSizeError(EgressError):
    """The response body is larger than allowed: ``File exceeds maximum allowed size ({n} bytes)``."""

    def __init__(self, max_bytes: int, *, request: httpx.Request | None = None) -> None:
        super().__init__(f"File exceeds maximum allowed size ({max_bytes} bytes)", request=request)
        self.max_bytes = max_bytes


class EgressResolveError(EgressError):
    """The host name could not be resolved (or resolved to nothing)."""
