"""The egress policy: which private targets are allowed, and the limits of an outbound request."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

import httpx

from .addresses import IPAddress, embedded_ipv4, normalise_name
from .errors import ALLOW_CIDRS_SETTING, ALLOW_HOSTS_SETTING

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

DEFAULT_MAX_REDIRECTS = 5  # SAFE_AXIOS_MAX_REDIRECTS, spec §6.2
DEFAULT_MAX_BYTES = 100 * 1024 * 1024


class EgressSettings(Protocol):
    """The part of ``fathom.config.Settings`` the policy reads."""

    egress_allow_cidrs: list[str]
    egress_allow_hosts: list[str]


def _parse_networks(values: Iterable[str]) -> tuple[IPNetwork, ...]:
    networks: list[IPNetwork] = []
    for value in values:
        text = value.strip()
        if not text:
            continue
        try:
            networks.append(ipaddress.ip_network(text, strict=False))
        except ValueError:
            raise ValueError(
                f"{ALLOW_CIDRS_SETTING}: {value!r} is not a CIDR (write 10.0.0.0/8, 10.1.2.3/32 or fd00::/8)"
            ) from None
    return tuple(networks)


def _parse_hosts(values: Iterable[str]) -> tuple[str, ...]:
    hosts: list[str] = []
    for value in values:
        text = normalise_name(value.strip())
        if not text:
            continue
        bare = text[2:] if text.startswith("*.") else text
        if not bare or "/" in bare or ":" in bare or "*" in bare:
            raise ValueError(
                f"{ALLOW_HOSTS_SETTING}: {value!r} is not a host name (write api.internal or *.corp.example)"
            )
        hosts.append(text)
    return tuple(hosts)


@dataclass(frozen=True)
class EgressPolicy:
    """What outbound HTTP may reach, and its limits.

    Public unicast addresses are always allowed. Loopback, private, link-local, shared, multicast and
    reserved addresses are blocked unless an entry of ``allow_cidrs`` covers the address or the URL's
    host name is in ``allow_hosts`` (``*.example.internal`` matches sub-domains). Cloud metadata
    addresses and names, and the unspecified address, are never allowed.
    """

    allow_cidrs: tuple[str, ...] = ()
    allow_hosts: tuple[str, ...] = ()
    max_redirects: int = DEFAULT_MAX_REDIRECTS
    max_bytes: int | None = DEFAULT_MAX_BYTES
    connect_timeout: float = 10.0
    read_timeout: float = 60.0
    write_timeout: float = 60.0
    pool_timeout: float = 10.0
    resolve_timeout: float = 10.0
    networks: tuple[IPNetwork, ...] = field(init=False, repr=False, compare=False)
    host_names: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "allow_cidrs", tuple(self.allow_cidrs))
        object.__setattr__(self, "allow_hosts", tuple(self.allow_hosts))
        object.__setattr__(self, "networks", _parse_networks(self.allow_cidrs))
        object.__setattr__(self, "host_names", _parse_hosts(self.allow_hosts))
        if self.max_redirects < 0:
            raise ValueError("max_redirects must be >= 0")
        if self.max_bytes is not None and self.max_bytes < 0:
            raise ValueError("max_bytes must be >= 0 (or None for no limit)")

    @classmethod
    def from_settings(cls, settings: EgressSettings, **overrides: object) -> EgressPolicy:
        """Build the policy from ``FATHOM_EGRESS_ALLOW_CIDRS`` / ``FATHOM_EGRESS_ALLOW_HOSTS``."""
        values: dict[str, object] = {
            "allow_cidrs": tuple(settings.egress_allow_cidrs),
            "allow_hosts": tuple(settings.egress_allow_hosts),
        }
        values.update(overrides)
        return cls(**values)  # type: ignore[arg-type]

    @property
    def timeout(self) -> httpx.Timeout:
        """The per-operation timeouts as an ``httpx.Timeout``."""
        return httpx.Timeout(
            connect=self.connect_timeout,
            read=self.read_timeout,
            write=self.write_timeout,
            pool=self.pool_timeout,
        )

    def allows_host(self, name: str) -> bool:
        """True when the (normalised) host name is explicitly allow-listed."""
        name = normalise_name(name)
        for entry in self.host_names:
            if entry.startswith("*."):
                if name.endswith(entry[1:]):
                    return True
            elif name == entry:
                return True
        return False

    def allows_address(self, ip: IPAddress) -> bool:
        """True when an allow-listed CIDR covers the address (or the IPv4 address it embeds)."""
        candidates: list[IPAddress] = [ip]
        if isinstance(ip, ipaddress.IPv6Address):
            inner = embedded_ipv4(ip)
            if inner is not None:
                candidates.append(inner)
        return any(
            candidate.version == network.version and candidate in network
            for candidate in candidates
            for network in self.networks
        )
