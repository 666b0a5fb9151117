"""API-key authentication: ``Authorization: Bearer <key>``, parsed as FastGPT does.

The scheme word is required. A token of two ``-``-separated parts is the key itself; three parts is the
legacy ``<key>-<appId>`` form, whose third part supplies the app when the key has none.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request

from fathom.platform import Platform
from fathom.server.errors import ApiError, unauthorized
from fathom.store.protocols import NotFound, Role


@dataclass(frozen=True)
class AuthContext:
    """Who is calling: the key's team, the member it acts as, and the app it is limited to (if any)."""

    team_id: str
    member_id: str
    role: Role
    api_key_id: str
    app_id: str | None
    key_app_bound: bool


def parse_bearer(header: str | None) -> tuple[str, str | None]:
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


async def authenticate(request: Request) -> AuthContext:
    """FastAPI dependency: the caller's identity, or 401 with the envelope."""
    platform: Platform = request.app.state.platform
    key, legacy_app_id = parse_bearer(request.headers.get("authorization"))
    record = await platform.api_keys.find_by_plain_key(key)
    if record is None:
        raise ApiError(401, "unAuthApiKey", "Api Key 不合法: the key is unknown or revoked.")
    try:
        member = await platform.teams.get_member(record.member_id)
    except NotFound:
        raise ApiError(401, "unAuthApiKey", "Api Key 不合法: the key's member no longer exists.") from None
    return AuthContext(
        team_id=record.team_id,
        member_id=record.member_id,
        role=member.role,
        api_key_id=record.id,
        app_id=record.app_id or legacy_app_id,
        key_app_bound=record.app_id is not None,
    )
