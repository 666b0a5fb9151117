"""The one place where the tool layer gets its outbound HTTP client.

HTTP tools (OpenAPI) and the MCP URL check go through what this module hands out: by default the
egress guard's client (:class:`fathom.security.egress.EgressGuard`), which checks every address,
pins connections to checked IPs, re-checks redirects and limits body sizes. Callers may pass a
guard, or (tests, special set-ups) an existing ``httpx.AsyncClient``-compatible client.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import httpx

__all__ = [
    "EgressGuardLike",
    "ToolHttpClient",
    "check_tool_url",
    "create_tool_http_client",
]


@runtime_checkable
class ToolHttpClient(Protocol):
    """The part of ``httpx.AsyncClient`` HTTP tools use."""

    async def request(self, method: str, url: httpx.URL | str, **kwargs: Any) -> httpx.Response: ...


@runtime_checkable
class EgressGuardLike(Protocol):
    """The part of :class:`fathom.security.egress.EgressGuard` the tool layer uses."""

    async def check_url(self, url: str) -> list[str]: ...

    def client(
        self,
        *,
        headers: dict[str, str] | None = ...,
        timeout: httpx.Timeout | float | None = ...,
    ) -> Any: ...


def _default_guard() -> EgressGuardLike:
    from fathom.security.egress import EgressGuard, EgressPolicy

    return EgressGuard(EgressPolicy())


def create_tool_http_client(
    source: EgressGuardLike | ToolHttpClient | None = None,
    *,
    timeout: float | httpx.Timeout | None = 60.0,
    headers: dict[str, str] | None = None,
) -> ToolHttpClient:
    """The outbound client for tools.

    ``source`` is an egress guard (its guarded client is built), an existing client (returned
    as is), or ``None`` (a guard with the default policy: public addresses only).
    """
    if source is None:
        source = _default_guard()
    if isinstance(source, EgressGuardLike):
        client: ToolHttpClient = source.client(timeout=timeout, headers=headers)
        return client
    if isinstance(source, ToolHttpClient):
        return source
    raise TypeError(f"Expected an EgressGuard or an httpx.AsyncClient, got {type(source).__name__}")


async def check_tool_url(url: str, guard: EgressGuardLike | None) -> None:
    """Refuse ``url`` unless the guard allows it (for clients the guard cannot wrap, e.g. the MCP SDK's)."""
    checker = guard if guard is not None else _default_guard()
    await checker.check_url(url)
