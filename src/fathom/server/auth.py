"""Who is calling: an API key (``Authorization: Bearer <key>``, parsed as FastGPT does) or a console
session (the ``fathom_session`` cookie set by a password sign-in).

The scheme word is required. A token of two ``-``-separated parts is the key itself; three parts is the
legacy ``<key>-<appId>`` form, whose third part supplies the app when the key has none.

A request with an Authorization header is a key request, cookie or not. A cookie-authenticated request
must also send the session's CSRF token in ``X-CSRF-Token``, whatever its method (FastGPT's routes
accept any verb, so a GET can write); only the identity routes (``whoami``, ``tokenLogin``) are exempt,
being how the console learns the token after a reload. Both ways build the same :class:`AuthContext`
from the member's role, so every permission rule applies to sessions unchanged.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass

from fastapi import Request

from fathom.platform import Platform
from fathom.server.errors import ApiError, unauthorized
from fathom.store.protocols import Role


@dataclass(frozen=True)
class AuthContext:
    """Who is calling: the key's team, the member it acts as, and the app it is limited to (if any)."""

    team_id: str
    member_id: str
    role: Role
    api_key_id: str | None
    app_id: str | None
    key_app_bound: bool
    user_id: str | None = None
    username: str | None = None
    session_id: str | None = None
    csrf_token: str | None = None


def _parse_bearer(header: str | None) -> tuple[str, str | None]:
    """Return (key, legacy app id) from an Authorization header, or raise 401."""
    if not header or not header.strip():
        raise unauthorized("Missing API key: send the header 'Authorization: Bearer <key>'.")
    parts = header.strip().split(" ", 1)
    if len(parts) != 2 or parts[0].lower() != "bearer" or not parts[1].strip():
        raise unauthorized("Malformed Authorization header: use 'Authorization: Bearer <key>'.")
    token = parts[1].strip()
    pieces = token.split("-")
    if len(pieces) == 2:
        return token, None
    if len(pieces) == 3:
        return f"{pieces[0]}-{pieces[1]}", pieces[2]
    raise unauthorized("Malformed API key: expected '<prefix>-<secret>' or '<prefix>-<secret>-<appId>'.")


SESSION_COOKIE = "fathom_session"
CSRF_HEADER = "x-csrf-token"


async def authenticate(request: Request) -> AuthContext:
    """FastAPI dependency: the caller's identity, or 401 with the envelope (403 for a cookie request
    without its CSRF token)."""
    return await _authenticate(request, csrf=True)


async def authenticate_identity(request: Request) -> AuthContext:
    """``authenticate`` without the CSRF check: only for the read-only identity routes."""
    return await _authenticate(request, csrf=False)


async def _authenticate(request: Request, *, csrf: bool) -> AuthContext:
    platform: Platform = request.app.state.platform
    if not request.headers.get("authorization") and request.cookies.get(SESSION_COOKIE):
        return await _session_context(platform, request, csrf=csrf)
    key, legacy_app_id = _parse_bearer(request.headers.get("authorization"))
    identity = await platform.team_admin.identify_key(key)  # cached; a revoke here drops it at once
    if identity is None:
        raise ApiError(401, "unAuthApiKey", "the key is unknown or revoked.")
    record, role = identity
    if role is None:
        raise ApiError(401, "unAuthApiKey", "the key's member no longer exists.")
    return AuthContext(
        team_id=record.team_id,
        member_id=record.member_id,
        role=role,
        api_key_id=record.id,
        app_id=record.app_id or legacy_app_id,
        key_app_bound=record.app_id is not None,
    )


async def _session_context(platform: Platform, request: Request, *, csrf: bool) -> AuthContext:
    found = await platform.accounts.resolve_session(request.cookies.get(SESSION_COOKIE, ""))
    if found is None:
        raise unauthorized("Your session has ended (signed out, expired or password changed); sign in again.")
    session, user = found
    sent = request.headers.get(CSRF_HEADER, "").encode("utf-8", "replace")
    if csrf and not hmac.compare_digest(sent, session.csrf_token.encode()):
        raise ApiError(
            403,
            "csrfTokenInvalid",
            "X-CSRF-Token: missing or wrong; a signed-in console request must send the csrfToken that "
            "sign-in (or GET /api/support/user/account/tokenLogin) answered.",
        )
    return AuthContext(
        team_id=user.team_id,
        member_id=user.member_id,
        role=user.role,
        api_key_id=None,
        app_id=None,
        key_app_bound=False,
        user_id=user.id,
        username=user.username,
        session_id=session.id,
        csrf_token=session.csrf_token,
    )
