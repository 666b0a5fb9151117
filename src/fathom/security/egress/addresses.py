"""Host parsing and IP address classification for the egress guard (spec §6.1).

The host text comes from ``httpx.URL`` (the same parser that later builds the request, so the guard
and the connection never disagree on what the host is). Numeric hosts are read the way
``inet_aton`` and the WHATWG URL standard read them: 1–4 parts, each decimal, ``0x`` hexadecimal or
``0``-prefixed octal, the last part filling the remaining bytes (``127.1``, ``2852039166``,
``0x7f000001``, ``0177.0.0.1``). A host whose last label is a number but which is not a valid IPv4
address (``o177.0.0.1``, ``383.0.0.1``) is refused rather than sent to DNS.

IPv6 addresses that carry an IPv4 address (IPv4-mapped ``::ffff:a.b.c.d``, IPv4-compatible
``::a.b.c.d``, SIIT ``::ffff:0:a.b.c.d``, NAT64 ``64:ff9b::/96``, 6to4 ``2002::/16``) are classified
by the IPv4 address they reach.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from enum import Enum

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class AddressKind(Enum):
    """What an address is, from most to least dangerous. Only ``PUBLIC`` passes without an allow-list."""

    METADATA = "cloud metadata"
    UNSPECIFIED = "unspecified"
    LOOPBACK = "loopback"
    LINK_LOCAL = "link-local"
    PRIVATE = "private"
    SHARED = "shared (carrier-grade NAT)"
    MULTICAST = "multicast"
    RESERVED = "reserved"
    PUBLIC = "public"

    @property
    def severity(self) -> int:
        """Lower is worse; used to report the worst reading of an address."""
        return _SEVERITY[self]


_SEVERITY = {kind: index for index, kind in enumerate(AddressKind)}

#: Cloud metadata endpoints. The whole IPv4 link-local block counts as metadata (spec §6.1.2).
METADATA_NETWORKS: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = (
    ipaddress.ip_network("169.254.0.0/16"),  # AWS, GCP, Azure IMDS, OpenStack, Tencent (169.254.0.23)
    ipaddress.ip_network("100.100.100.200/32"),  # Alibaba Cloud
    ipaddress.ip_network("168.63.129.16/32"),  # Azure WireServer
    ipaddress.ip_network("192.0.0.192/32"),  # Oracle Cloud
    ipaddress.ip_network("fd00:ec2::254/128"),  # AWS IMDS over IPv6
    ipaddress.ip_network("fd20:ce::254/128"),  # GCP metadata over IPv6
)

#: Host names of metadata services (spec §6.1.2, plus the AWS and Kubernetes long forms).
METADATA_HOSTNAMES: frozenset[str] = frozenset(
    {
        "metadata.google.internal",
        "metadata",
        "metadata.tencentyun.com",
        "kubernetes.default.svc",
        "kubernetes.default",
        "kubernetes",
        "kubernetes.default.svc.cluster.local",
        "instance-data",
        "instance-data.ec2.internal",
        "metadata.azure.com",
    }
)

_SHARED_V4 = ipaddress.IPv4Network("100.64.0.0/10")
_PRIVATE_V4 = (
    ipaddress.IPv4Network("10.0.0.0/8"),
    ipaddress.IPv4Network("172.16.0.0/12"),
    ipaddress.IPv4Network("192.168.0.0/16"),
)
_THIS_NETWORK_V4 = ipaddress.IPv4Network("0.0.0.0/8")
_NAT64_V6 = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL_V6 = ipaddress.IPv6Network("64:ff9b:1::/48")
_COMPAT_V6 = ipaddress.IPv6Network("::/96")
_SIIT_V6 = ipaddress.IPv6Network("::ffff:0:0:0/96")
_UNIQUE_LOCAL_V6 = ipaddress.IPv6Network("fc00::/7")
_SITE_LOCAL_V6 = ipaddress.IPv6Network("fec0::/10")

_NAME_RE = re.compile(r"^[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?)*$")
_DEC_RE = re.compile(r"^[0-9]+$")
_HEX_RE = re.compile(r"^0[xX][0-9a-fA-F]*$")
_OCT_RE = re.compile(r"^0[0-7]+$")


class HostError(ValueError):
    """The host text is not a usable host (empty, bad characters, a number that is no IPv4 address)."""


@dataclass(frozen=True)
class ParsedHost:
    """A host read from a URL: either an IP literal (``ip``) or a DNS name (``name``, normalised)."""

    text: str
    ip: IPAddress | None = None
    name: str | None = None


def _parse_ipv4_part(part: str) -> int | None:
    if _HEX_RE.match(part):
        return int(part[2:] or "0", 16)
    if _OCT_RE.match(part):
        return int(part, 8)
    if part.startswith("0") and len(part) > 1:
        return None  # "08": neither octal nor decimal for inet_aton
    if _DEC_RE.match(part):
        return int(part, 10)
    return None


def _parse_ipv4_legacy(text: str) -> ipaddress.IPv4Address | None:
    """Read ``text`` as ``inet_aton`` does (1–4 parts, decimal/hex/octal), else ``None``."""
    if text.endswith("."):
        text = text[:-1]
    parts = text.split(".")
    if not 1 <= len(parts) <= 4 or any(part == "" for part in parts):
        return None
    numbers: list[int] = []
    for part in parts:
        value = _parse_ipv4_part(part)
        if value is None:
            return None
        numbers.append(value)
    *head, last = numbers
    if any(value > 255 for value in head):
        return None
    if last >= 256 ** (5 - len(numbers)):
        return None
    value = last
    for index, byte in enumerate(head):
        value += byte << (8 * (3 - index))
    return ipaddress.IPv4Address(value)


def _ends_in_number(host: str) -> bool:
    """WHATWG "ends in a number": the last label is decimal digits or ``0x`` hex (so: an IPv4 host)."""
    labels = host.split(".")
    if labels and labels[-1] == "" and len(labels) > 1:
        labels.pop()
    last = labels[-1] if labels else ""
    return bool(_DEC_RE.match(last) or _HEX_RE.match(last))


def normalise_name(host: str) -> str:
    """Lower-case a DNS name and drop trailing dots (``METADATA.GOOGLE.INTERNAL.`` → lower case, no dot)."""
    return host.lower().rstrip(".")


def parse_host(host: str) -> ParsedHost:
    """Read the host of a parsed URL into an IP literal or a normalised DNS name, or raise HostError."""
    if not host:
        raise HostError("URL has no host")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if ":" in host:
        if "%" in host:
            raise HostError(f"IPv6 zone identifiers are not allowed: {host}")
        try:
            return ParsedHost(text=host, ip=ipaddress.IPv6Address(host))
        except ValueError:
            raise HostError(f"Invalid IPv6 address: {host}") from None
    if _ends_in_number(host):
        ip = _parse_ipv4_legacy(host)
        if ip is None:
            raise HostError(f"Host {host!r} ends in a number but is not a valid IPv4 address")
        return ParsedHost(text=host, ip=ip)
    name = normalise_name(host)
    if not name or not _NAME_RE.match(name):
        raise HostError(f"Invalid host name: {host!r}")
    return ParsedHost(text=host, name=name)


def parse_ip(text: str) -> IPAddress:
    """Parse an address as returned by a resolver (canonical text, IPv6 zone dropped)."""
    return ipaddress.ip_address(text.split("%", 1)[0])


def embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address reaches through mapping or translation, if any."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    packed = int(ip)
    if ip in _NAT64_V6 or ip in _SIIT_V6:
        return ipaddress.IPv4Address(packed & 0xFFFFFFFF)
    if ip in _COMPAT_V6 and packed > 1:
        return ipaddress.IPv4Address(packed & 0xFFFFFFFF)
    return None


def _is_metadata(ip: IPAddress) -> bool:
    """True for cloud metadata endpoints, also when reached through an IPv4-in-IPv6 form."""
    if isinstance(ip, ipaddress.IPv6Address):
        inner = embedded_ipv4(ip)
        if inner is not None and _is_metadata(inner):
            return True
    return any(ip.version == net.version and ip in net for net in METADATA_NETWORKS)


def _classify_v4(ip: ipaddress.IPv4Address) -> AddressKind:
    if _is_metadata(ip):
        return AddressKind.METADATA
    if ip in _THIS_NETWORK_V4:
        return AddressKind.UNSPECIFIED
    if ip.is_loopback:
        return AddressKind.LOOPBACK
    if ip.is_link_local:
        return AddressKind.LINK_LOCAL
    if ip.is_multicast:
        return AddressKind.MULTICAST
    if any(ip in net for net in _PRIVATE_V4):
        return AddressKind.PRIVATE
    if ip in _SHARED_V4:
        return AddressKind.SHARED
    if ip.is_global and not ip.is_reserved:
        return AddressKind.PUBLIC
    return AddressKind.RESERVED


def _classify_v6(ip: ipaddress.IPv6Address) -> AddressKind:
    if _is_metadata(ip):
        return AddressKind.METADATA
    if ip.is_unspecified:
        return AddressKind.UNSPECIFIED
    if ip.is_loopback:
        return AddressKind.LOOPBACK
    inner = embedded_ipv4(ip)
    if inner is not None:
        return _classify_v4(inner)
    if ip.teredo is not None:
        server, client = ip.teredo
        worst = min((_classify_v4(server), _classify_v4(client)), key=lambda kind: kind.severity)
        return worst if worst.severity < AddressKind.RESERVED.severity else AddressKind.RESERVED
    if ip.is_link_local:
        return AddressKind.LINK_LOCAL
    if ip.is_multicast:
        return AddressKind.MULTICAST
    if ip in _UNIQUE_LOCAL_V6 or ip in _SITE_LOCAL_V6:
        return AddressKind.PRIVATE
    if ip in _NAT64_LOCAL_V6:
        return AddressKind.PRIVATE
    if ip.is_global and not ip.is_reserved:
        return AddressKind.PUBLIC
    return AddressKind.RESERVED


def classify(ip: IPAddress) -> AddressKind:
    """Classify an address; IPv4-in-IPv6 forms are classified by the IPv4 address they reach."""
    if isinstance(ip, ipaddress.IPv4Address):
        return _classify_v4(ip)
    return _classify_v6(ip)


def is_metadata_name(name: str) -> bool:
    """True for a metadata service host name (normalised, see :func:`normalise_name`)."""
    return normalise_name(name) in METADATA_HOSTNAMES


def is_localhost_name(name: str) -> bool:
    """True for ``localhost`` and any ``*.localhost`` name (RFC 6761: always loopback)."""
    name = normalise_name(name)
    return name == "localhost" or name.endswith(".localhost")
