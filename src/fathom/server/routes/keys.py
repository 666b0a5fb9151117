"""API keys on FastGPT's ``/api/support/openapi/*`` paths: create (plain key shown once), list, revoke.

Only owners and admins manage keys, and only with a team-wide key: a key limited to one app is refused.
An owner revokes any key of the team, an admin only the keys they made.
Listings never carry the secret; they show the key's prefix so a user can tell keys apart.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, Field, StringConstraints

from fathom.server.auth import AuthContext, authenticate
from fathom.server.errors import ApiError, envelope, not_found
from fathom.server.permissions import forbidden, require_team_key
from fathom.server.routes.common import iso, platform_of
from fathom.server.typed import ApiModel, ObjectId, OptionalObjectId, answers, parsed
from fathom.store.protocols import ApiKeyRecord, NotFound

router = APIRouter(tags=["api keys"])

NAME_MAX = 100


class CreateKey(ApiModel):
    name: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=NAME_MAX)] = Field(
        description="A name you will recognise (e.g. website bot)", examples=["website bot"]
    )
    appId: OptionalObjectId = Field(None, description="Limit the key to chatting with this app")


class ListKeys(ApiModel):
    appId: OptionalObjectId = Field(None, description="Only the keys limited to this app")


class RevokeKey(ApiModel):
    id: ObjectId = Field(description="The key's id (from the list)")


class KeyView(BaseModel):
    """FastGPT's OpenApi list item, plus Fathom's revocation time; never the secret."""

    id_: str = Field(alias="_id")
    id: str
    name: str
    apiKey: str = Field(description="The key's prefix, then asterisks", examples=["fastgpt-Ab12******"])
    prefix: str
    appId: str | None
    tmbId: str
    usagePoints: float
    createTime: str | None
    lastUsedTime: str | None
    revokedTime: str | None


def _require_key_admin(auth: AuthContext) -> None:
    """Owners and admins with a team-wide key only."""
    require_team_key(auth, "manage API keys", "api key")
    if auth.role not in ("owner", "admin"):
        raise forbidden("manage API keys (owners and admins only)", "api key")


async def key_admin(request: Request) -> AuthContext:
    """The caller, when it may manage keys: checked before the body is validated."""
    auth = await authenticate(request)
    _require_key_admin(auth)
    return auth


def _key_view(record: ApiKeyRecord) -> dict[str, Any]:
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


@router.post(
    "/api/support/openapi/create",
    summary="Create an API key",
    responses=answers(str, description="``data`` is the plain key, shown this once; ``key`` describes it"),
)
async def create_key(
    request: Request, auth: AuthContext = Depends(key_admin), payload: CreateKey = parsed(CreateKey)
) -> dict[str, Any]:
    """Answer ``data`` = the plain key, exactly once (as FastGPT does); ``keyId`` is sent in a header."""
    record, plain = await platform_of(request).team_admin.create_key(
        auth.team_id, auth.member_id, name=payload.name, app_id=payload.appId
    )
    return envelope(plain) | {"key": _key_view(record)}


@router.get("/api/support/openapi/list", summary="List API keys", responses=answers(list[KeyView]))
async def list_keys(
    request: Request, auth: AuthContext = Depends(key_admin), payload: ListKeys = parsed(ListKeys)
) -> dict[str, Any]:
    records = await platform_of(request).team_admin.list_keys(auth.team_id, payload.appId)
    return envelope([_key_view(r) for r in records])


@router.delete("/api/support/openapi/delete", summary="Revoke an API key", responses=answers(None))
async def revoke_key(
    request: Request, auth: AuthContext = Depends(key_admin), payload: RevokeKey = parsed(RevokeKey)
) -> dict[str, Any]:
    """An owner revokes any key of the team; an admin only the keys they made."""
    key_id = payload.id
    if key_id == auth.api_key_id:
        raise ApiError(400, "invalidParams", "id: a key cannot revoke itself; use another owner/admin key")
    admin = platform_of(request).team_admin
    record = await admin.key(auth.team_id, key_id)
    if record is not None and auth.role != "owner" and record.member_id != auth.member_id:
        raise forbidden("revoke a key another member made (only an owner or the key's maker may)", "api key")
    try:
        await admin.revoke_key(auth.team_id, key_id)
    except NotFound:
        raise not_found("api key", f"id: no API key {key_id!r} in this team") from None
    return envelope(None)
