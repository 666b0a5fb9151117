"""fathom.security: the egress guard (SSRF-safe outbound HTTP), file contexts, secrets, permissions."""

from fathom.security.egress import (
    EgressDenied,
    EgressError,
    EgressGuard,
    EgressPolicy,
    EgressRedirectError,
    EgressResolveError,
    EgressSizeError,
    GuardedAsyncClient,
    GuardedTransport,
    StaticResolver,
    system_resolver,
)

__all__ = [
    "EgressDenied",
    "EgressError",
    "EgressGuard",
    "EgressPolicy",
    "EgressRedirectError",
    "EgressResolveError",
    "EgressSizeError",
    "GuardedAsyncClient",
    "GuardedTransport",
    "StaticResolver",
    "system_resolver",
]
