"""Egress guard: the SSRF-safe way Fathom makes outbound HTTP (spec §6.1–§6.3).

``EgressGuard(policy, resolver=None)`` checks URLs (``await guard.check_url(url)``) and builds the
guarded client (``guard.client()``), an ``httpx.AsyncClient`` that resolves once, checks every
address, connects only to checked addresses, follows redirects itself and limits body sizes.
"""

from .addresses import (
    METADATA_HOSTNAMES,
    METADATA_NETWORKS,
    AddressKind,
    HostError,
    ParsedHost,
    classify,
    parse_host,
)
from .client import GuardedAsyncClient
from .errors import (
    ALLOW_CIDRS_SETTING,
    ALLOW_HOSTS_SETTING,
    PRIVATE_URL_TEXT,
    EgressDenied,
    EgressError,
    EgressRedirectError,
    EgressResolveError,
    EgressSizeError,
)
from .guard import CheckedTarget, EgressGuard
from .policy import DEFAULT_MAX_BYTES, DEFAULT_MAX_REDIRECTS, EgressPolicy, EgressSettings
from .redirects import REDIRECT_STATUS_CODES, build_redirect_request
from .resolver import Resolver, StaticResolver, system_resolver
from .transport import GuardedTransport, PinnedNetworkBackend

__all__ = [
    "ALLOW_CIDRS_SETTING",
    "ALLOW_HOSTS_SETTING",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_REDIRECTS",
    "METADATA_HOSTNAMES",
    "METADATA_NETWORKS",
    "PRIVATE_URL_TEXT",
    "REDIRECT_STATUS_CODES",
    "AddressKind",
    "CheckedTarget",
    "EgressDenied",
    "EgressError",
    "EgressGuard",
    "EgressPolicy",
    "EgressRedirectError",
    "EgressResolveError",
    "EgressSettings",
    "EgressSizeError",
    "GuardedAsyncClient",
    "GuardedTransport",
    "HostError",
    "ParsedHost",
    "PinnedNetworkBackend",
    "Resolver",
    "StaticResolver",
    "build_redirect_request",
    "classify",
    "parse_host",
    "system_resolver",
]
