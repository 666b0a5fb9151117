"""What the guarded client and transport need of the egress guard: a checked target and the checker's
interface. The guard (``guard.py``) implements :class:`UrlChecker` and builds clients over it, so the
client and transport depend on this small module, not on the guard."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

import httpx

from .errors import EgressDenied
from .policy import EgressPolicy


@dataclass(frozen=True)
class CheckedTarget:
    """A URL that passed the guard: ``host`` as the connection layer sees it, and the checked IPs."""

    url: httpx.URL
    host: str
    addresses: tuple[str, ...]


class UrlChecker(Protocol):
    """The egress guard as the client and transport see it."""

    @property
    def policy(self) -> EgressPolicy:
        """The policy enforced (timeouts, redirect and size limits)."""
        ...

    async def check(self, url: str | httpx.URL) -> CheckedTarget:
        """Parse, resolve and check ``url``, or raise :class:`EgressDenied`."""
        ...


_AMBIGUOUS = re.compile(r"[\\\s\x00-\x1f\x7f]")


def reject_ambiguous_url(url: str) -> None:
    """Refuse backslashes, whitespace and control characters: they make URL parsers disagree on the host."""
    if _AMBIGUOUS.search(url):
        raise EgressDenied(
            f"Refused URL {url!r}: backslashes, spaces and control characters are not allowed", url=url
        )
