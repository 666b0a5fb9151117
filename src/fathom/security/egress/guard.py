"""The egress guard: decides whether a URL may be fetched and pins the addresses it checked."""

from __future__ import annotations

import asyncio
import ipaddress
from typing import TYPE_CHECKING

import httpx

from .addresses import (
    AddressKind,
    HostError,
    IPAddress,
    classify,
    embedded_ipv4,
    is_localhost_name,
    is_metadata_name,
    parse_host,
    parse_ip,
)
from .client import GuardedAsyncClient
from .errors import (
    ALLOW_CIDRS_SETTING,
    ALLOW_HOSTS_SETTING,
    PRIVATE_URL_TEXT,
    EgressDenied,
    EgressResolveError,
)
from .policy import EgressPolicy
from .resolver import Resolver, system_resolver
from .target import CheckedTarget, reject_ambiguous_url

if TYPE_CHECKING:
    import ssl

    import httpcore

ALLOWED_SCHEMES = ("http", "https")
_NEVER = f"it is never allowed, whatever {ALLOW_CIDRS_SETTING} or {ALLOW_HOSTS_SETTING} say"


def _describe(ip: IPAddress) -> str:
    if isinstance(ip, ipaddress.IPv6Address):
        inner = embedded_ipv4(ip)
        if inner is not None:
            return f"{ip} (reaches {inner})"
    return str(ip)


def _host_cidr(ip: IPAddress) -> str:
    return f"{ip}/{ip.max_prefixlen}"


class EgressGuard:
    """Checks outbound URLs against an :class:`EgressPolicy` and builds guarded HTTP clients.

    ``resolver`` is an async callable ``host -> list[str]``; by default the system resolver, run off the
    event loop. Every resolved address must pass; a mixed answer (one public, one private) is refused.
    """

    def __init__(self, policy: EgressPolicy | None = None, resolver: Resolver | None = None) -> None:
        self._policy = policy if policy is not None else EgressPolicy()
        self._resolver: Resolver = resolver if resolver is not None else system_resolver

    @property
    def policy(self) -> EgressPolicy:
        """The policy this guard enforces."""
        return self._policy

    async def check_url(self, url: str | httpx.URL) -> list[str]:
        """Return the addresses ``url`` may be fetched from, or raise :class:`EgressDenied`."""
        return list((await self.check(url)).addresses)

    def parse_url(self, url: str | httpx.URL) -> httpx.URL:
        """Parse ``url`` as the client will, refusing ambiguous text and non-http(s) schemes."""
        text = str(url)
        if isinstance(url, str):
            reject_ambiguous_url(url)
            try:
                url = httpx.URL(url)
            except httpx.InvalidURL as exc:
                raise EgressDenied(f"Invalid URL {text!r}: {exc}", url=text) from None
        if url.scheme not in ALLOWED_SCHEMES:
            scheme = f"{url.scheme}:" if url.scheme else "(none)"
            raise EgressDenied(f"Only http and https URLs are allowed, got {scheme} in {text!r}", url=text)
        return url

    async def check(self, url: str | httpx.URL) -> CheckedTarget:
        """Parse, resolve and check ``url``; the result pins the addresses a connection may use."""
        parsed = self.parse_url(url)
        text = str(url)
        host = parsed.raw_host.decode("ascii")
        try:
            target = parse_host(host)
        except HostError as exc:
            raise EgressDenied(f"Refused URL {text!r}: {exc}", url=text, host=host) from None
        if target.ip is not None:
            self._check_address(target.ip, url=text, host=host, name=None, name_allowed=False)
            return CheckedTarget(url=parsed, host=host, addresses=(str(target.ip),))
        name = target.name or host
        if is_metadata_name(name):
            raise EgressDenied(
                f"{PRIVATE_URL_TEXT}: {name} is a cloud metadata host name; {_NEVER}", url=text, host=host
            )
        name_allowed = self._policy.allows_host(name)
        if is_localhost_name(name) and not name_allowed:
            raise EgressDenied(
                f"{PRIVATE_URL_TEXT}: {name} is a loopback host name. "
                f"To allow it, add {name} to {ALLOW_HOSTS_SETTING}.",
                url=text,
                host=host,
                setting=ALLOW_HOSTS_SETTING,
            )
        addresses = await self._resolve(name, url=text)
        checked: list[str] = []
        for ip in addresses:
            self._check_address(ip, url=text, host=host, name=name, name_allowed=name_allowed)
            if str(ip) not in checked:
                checked.append(str(ip))
        return CheckedTarget(url=parsed, host=host, addresses=tuple(checked))

    async def _resolve(self, name: str, *, url: str) -> list[IPAddress]:
        try:
            async with asyncio.timeout(self._policy.resolve_timeout):
                answer = await self._resolver(name)
        except TimeoutError:
            raise EgressResolveError(f"Could not resolve host {name}: timed out") from None
        except OSError as exc:
            raise EgressResolveError(f"Could not resolve host {name}: {exc}") from None
        if not answer:
            raise EgressResolveError(f"Could not resolve host {name}: no addresses")
        addresses: list[IPAddress] = []
        for item in answer:
            try:
                addresses.append(parse_ip(item))
            except ValueError:
                raise EgressDenied(
                    f"Refused URL {url!r}: the resolver returned {item!r} for {name}, not an IP address",
                    url=url,
                    host=name,
                ) from None
        return addresses

    def _check_address(
        self, ip: IPAddress, *, url: str, host: str, name: str | None, name_allowed: bool
    ) -> None:
        kind = classify(ip)
        if kind is AddressKind.PUBLIC:
            return
        # A name's refusal never says what it resolved to: the message reaches the caller (a tool's
        # error, a node's response), and this server's view of internal DNS is not theirs to map. The
        # address stays on the exception (``address``) for the code that handles it.
        if name:
            if kind in (AddressKind.METADATA, AddressKind.UNSPECIFIED):
                message = f"{PRIVATE_URL_TEXT}: {name} resolves to a blocked address; {_NEVER}"
                raise EgressDenied(message, url=url, host=host, address=str(ip))
            if name_allowed or self._policy.allows_address(ip):
                return
            fix = f"add {name} to {ALLOW_HOSTS_SETTING} (or its addresses to {ALLOW_CIDRS_SETTING})"
            message = f"{PRIVATE_URL_TEXT}: {name} resolves to a blocked address. To allow it, {fix}."
            raise EgressDenied(message, url=url, host=host, address=str(ip), setting=ALLOW_HOSTS_SETTING)
        where = f"{_describe(ip)} is"  # the caller wrote this address: naming it tells them nothing new
        if kind is AddressKind.METADATA:
            message = f"{PRIVATE_URL_TEXT}: {where} a cloud metadata address; {_NEVER}"
            raise EgressDenied(message, url=url, host=host, address=str(ip))
        if kind is AddressKind.UNSPECIFIED:
            message = (
                f"{PRIVATE_URL_TEXT}: {where} the unspecified address; {_NEVER} "
                f"(to reach this machine, add 127.0.0.1/32 to {ALLOW_CIDRS_SETTING} and use 127.0.0.1)"
            )
            raise EgressDenied(message, url=url, host=host, address=str(ip))
        if name_allowed or self._policy.allows_address(ip):
            return
        fix = f"add {_host_cidr(ip)} to {ALLOW_CIDRS_SETTING}"
        message = f"{PRIVATE_URL_TEXT}: {where} a {kind.value} address. To allow it, {fix}."
        raise EgressDenied(message, url=url, host=host, address=str(ip), setting=ALLOW_CIDRS_SETTING)

    def client(
        self,
        *,
        headers: dict[str, str] | None = None,
        timeout: httpx.Timeout | float | None = None,
        max_bytes: int | None = -1,
        follow_redirects: bool = True,
        verify: ssl.SSLContext | bool = True,
        base_url: str = "",
        network_backend: httpcore.AsyncNetworkBackend | None = None,
    ) -> GuardedAsyncClient:
        """A guarded ``httpx.AsyncClient``: every hop checked, pinned to checked IPs, size-limited.

        ``max_bytes=-1`` takes the policy's limit; ``None`` means no limit. ``network_backend`` replaces
        the socket layer under the pinning (tests use one that records and refuses connections).
        """
        return GuardedAsyncClient(
            self,
            headers=headers,
            timeout=timeout,
            max_bytes=self._policy.max_bytes if max_bytes == -1 else max_bytes,
            follow_redirects=follow_redirects,
            verify=verify,
            base_url=base_url,
            network_backend=network_backend,
        )
