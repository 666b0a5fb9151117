"""Who may use what: collaborators of an app or knowledge base, and members' roles.

- ``core/app/collaborator/*`` and ``core/dataset/collaborator/*`` (FastGPT keeps these in its pro
  edition, under ``/proApi``): list who holds read, write or manage on the resource (anyone who may read
  it), grant one permission to members by ``tmbIds`` or revoke a member's (owners, admins and members with
  manage on it). Another team's resource or member is not found.
- ``support/user/team/member/updateRole`` and ``member/delete`` (Fathom's names; FastGPT's are pro-only):
  owners and admins change a role or remove a member. Admins neither make owners nor touch them; the team's
  last owner stays. A removed member's keys, password and sessions go at once (the key cache forgets them).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request

from fathom.server.auth import AuthContext, authenticate
from fathom.server.errors import ApiError, envelope
from fathom.server.permissions import Need, forbidden
from fathom.server.routes.accounts import require_people_admin
from fathom.server.routes.app_access import load_app
from fathom.server.routes.common import ANY_METHOD, object_id, params, platform_of
from fathom.server.routes.datasets import load_dataset
from fathom.store.protocols import PERMISSIONS, ROLES, MemberRecord, NotFound, Permission

router = APIRouter(tags=["team access"])

#: FastGPT's permission values (read, read+write, read+write+manage bits)
PERMISSION_VALUES: dict[Permission, int] = {"read": 4, "write": 6, "manage": 7}
_BY_VALUE = {value: name for name, value in PERMISSION_VALUES.items()}


def permission_of(value: object) -> Permission:
    """``read``/``write``/``manage``, or FastGPT's 4/6/7."""
    if isinstance(value, int) and not isinstance(value, bool) and value in _BY_VALUE:
        return _BY_VALUE[value]
    if isinstance(value, str) and value in PERMISSIONS:
        return value
    raise ApiError(400, "invalidParams", "permission: one of read, write, manage (or FastGPT's 4, 6, 7)")


def member_ids(values: dict[str, Any]) -> list[str]:
    raw = values.get("tmbIds", values.get("members"))
    if not isinstance(raw, list) or not raw:
        raise ApiError(400, "missingParams", "tmbIds: a non-empty list of member ids is required")
    return [object_id({"tmbIds": item}, "tmbIds", "member") for item in raw]


async def team_member(request: Request, auth: AuthContext, member_id: str) -> MemberRecord:
    try:
        member = await platform_of(request).teams.get_member(member_id)
    except NotFound:
        member = None
    if member is None or member.team_id != auth.team_id:
        raise ApiError(404, "unExist", f"tmbId: no member {member_id!r} in this team")
    return member


async def load_resource(
    request: Request, auth: AuthContext, kind: str, values: dict[str, Any], need: Need
) -> str:
    """The id of the app (``appId``) or knowledge base (``datasetId``) the caller may ``need``."""
    if kind == "app":
        app_id = object_id(values, "appId")
        await load_app(request, auth, app_id, need)
        return app_id
    dataset_id = object_id(values, "datasetId")
    await load_dataset(request, auth, dataset_id, need)
    return dataset_id


async def list_collaborators(request: Request, auth: AuthContext, kind: str) -> dict[str, Any]:
    resource_id = await load_resource(request, auth, kind, await params(request), "read")
    granted = await platform_of(request).teams.list_permissions(auth.team_id, kind, resource_id)
    return envelope(
        [
            {
                "tmbId": member.id,
                "teamId": member.team_id,
                "name": member.name,
                "role": member.role,
                "per": permission,
                "permission": {
                    "value": PERMISSION_VALUES[permission],
                    "hasReadPer": True,
                    "hasWritePer": permission != "read",
                    "hasManagePer": permission == "manage",
                },
            }
            for member, permission in granted
        ]
    )


async def update_collaborators(request: Request, auth: AuthContext, kind: str) -> dict[str, Any]:
    values = await params(request)
    resource_id = await load_resource(request, auth, kind, values, "manage")
    permission = permission_of(values.get("permission"))
    members = [await team_member(request, auth, member_id) for member_id in member_ids(values)]
    teams = platform_of(request).teams
    for member in members:
        await teams.set_permission(member.id, kind, resource_id, permission)
    return envelope(None)


async def delete_collaborator(request: Request, auth: AuthContext, kind: str) -> dict[str, Any]:
    values = await params(request)
    resource_id = await load_resource(request, auth, kind, values, "manage")
    member = await team_member(request, auth, object_id(values, "tmbId", "member"))
    await platform_of(request).teams.set_permission(member.id, kind, resource_id, None)
    return envelope(None)


@router.api_route("/api/core/app/collaborator/list", methods=ANY_METHOD, summary="Who may use an app")
async def app_collaborators(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    return await list_collaborators(request, auth, "app")


@router.api_route(
    "/api/core/app/collaborator/update", methods=ANY_METHOD, summary="Grant members a permission on an app"
)
async def update_app_collaborators(
    request: Request, auth: AuthContext = Depends(authenticate)
) -> dict[str, Any]:
    return await update_collaborators(request, auth, "app")


@router.api_route(
    "/api/core/app/collaborator/delete", methods=ANY_METHOD, summary="Revoke a member's permission on an app"
)
async def delete_app_collaborator(
    request: Request, auth: AuthContext = Depends(authenticate)
) -> dict[str, Any]:
    return await delete_collaborator(request, auth, "app")


@router.api_route(
    "/api/core/dataset/collaborator/list", methods=ANY_METHOD, summary="Who may use a knowledge base"
)
async def dataset_collaborators(
    request: Request, auth: AuthContext = Depends(authenticate)
) -> dict[str, Any]:
    return await list_collaborators(request, auth, "dataset")


@router.api_route(
    "/api/core/dataset/collaborator/update",
    methods=ANY_METHOD,
    summary="Grant members a permission on a knowledge base",
)
async def update_dataset_collaborators(
    request: Request, auth: AuthContext = Depends(authenticate)
) -> dict[str, Any]:
    return await update_collaborators(request, auth, "dataset")


@router.api_route(
    "/api/core/dataset/collaborator/delete",
    methods=ANY_METHOD,
    summary="Revoke a member's permission on a knowledge base",
)
async def delete_dataset_collaborator(
    request: Request, auth: AuthContext = Depends(authenticate)
) -> dict[str, Any]:
    return await delete_collaborator(request, auth, "dataset")


async def member_to_change(request: Request, auth: AuthContext, values: dict[str, Any]) -> MemberRecord:
    require_people_admin(auth)
    member = await team_member(request, auth, object_id(values, "tmbId", "member"))
    if member.role == "owner" and auth.role != "owner":
        raise forbidden("change or remove an owner (owners only)", "api key")
    return member


@router.post("/api/support/user/team/member/updateRole", summary="Change a member's role")
async def update_member_role(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    values = await params(request)
    member = await member_to_change(request, auth, values)
    role = values.get("role")
    if role not in ROLES:
        raise ApiError(400, "invalidParams", f"role: one of {', '.join(ROLES)}")
    if role == "owner" and auth.role != "owner":
        raise forbidden("make an owner (owners only)", "api key")
    platform = platform_of(request)
    updated = await platform.teams.set_role(auth.team_id, member.id, role)
    platform.api_keys.forget_member(member.id)  # their keys' next request reads the new role
    return envelope({"tmbId": updated.id, "memberName": updated.name, "role": updated.role})


@router.delete("/api/support/user/team/member/delete", summary="Remove a member from the team")
async def delete_member(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    member = await member_to_change(request, auth, await params(request))
    platform = platform_of(request)
    await platform.teams.remove_member(auth.team_id, member.id)
    platform.api_keys.forget_member(member.id)  # their keys fail on their very next request
    return envelope(None)
