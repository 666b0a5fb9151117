"""API keys on FastGPT's ``/api/support/openapi/*`` paths: create (plain key shown once), list, revoke.

Only owners and admins manage keys, and only with a team-wide key: a key limited to one app is refused.
Listings never carry the secret; they show the key's prefix so a user can tell keys apart.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request

from fathom.server.auth import AuthContext, authenticate
from fathom.server.errors import ApiError, envelope, not_found
from fathom.server.permissions import forbidden, require_team_key
from fathom.server.routes.common import iso, object_id, params, platform_of
from fathom.store.protocols import ApiKeyRecord, NotFound

router = APIRouter(tags=["api keys"])

NAME_MAX = 100


def require_key_admin(auth: AuthContext) -> None:
    """Owners and admins with a team-wide key only."""
    require_team_key(auth, "manage API keys", "api key")
    if auth.role not in ("owner", "admin"):
        raise forbidden("manage API keys (owners and admins only)", "api key")


def key_view(record: ApiKeyRecord) -> dict[str, Any]:
    """FastGPT's OpenApi list item, plus Fathom's revocation time; never the secret."""
    return {
        "_id": record.id,
        "id": record.id,
        "name": record.name,
        "apiKey": f"{record.prefix}******",
        "prefix": record.prefix,
        "appId": record.app_id,
        "tmbId": record.member_id,
        "usagePoints": record.usage_points,
        "createTime": iso(record.created_at),
        "lastUsedTime": iso(record.last_used_at),
        "revokedTime": iso(record.revoked_at),
    }


@router.post("/api/support/openapi/create", summary="Create an API key")
async def create_key(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    """Answer ``data`` = the plain key, exactly once (as FastGPT does); ``keyId`` is sent in a header."""
    require_key_admin(auth)
    values = await params(request)
    name = str(values.get("name") or "").strip()
    if not name:
        raise ApiError(
            400, "invalidParams", "name: required; give the key a name you will recognise (e.g. website bot)"
        )
    if len(name) > NAME_MAX:
        raise ApiError(400, "invalidParams", f"name: at most {NAME_MAX} characters")
    app_id = values.get("appId") or None
    platform = platform_of(request)
    if app_id is not None:
        app_id = object_id(values, "appId")
        await platform.apps.get_app(auth.team_id, app_id)  # 404 when not in this team
    record, plain = await platform.api_keys.create_key(auth.team_id, auth.member_id, name=name, app_id=app_id)
    return envelope(plain) | {"key": key_view(record)}


@router.get("/api/support/openapi/list", summary="List API keys")
async def list_keys(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    require_key_admin(auth)
    values = await params(request)
    app_id = values.get("appId") or None
    records = await platform_of(request).api_keys.list_keys(auth.team_id, app_id)
    return envelope([key_view(r) for r in records])


@router.delete("/api/support/openapi/delete", summary="Revoke an API key")
async def revoke_key(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    require_key_admin(auth)
    values = await params(request)
    key_id = object_id(values, "id", "api key")
    if key_id == auth.api_key_id:
        raise ApiError(400, "invalidParams", "id: a key cannot revoke itself; use another owner/admin key")
    try:
        await platform_of(request).api_keys.revoke_key(auth.team_id, key_id)
    except NotFound:
        raise not_found("api key", f"id: no API key {key_id!r} in this team") from None
    return envelope(None)
