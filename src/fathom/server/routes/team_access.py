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

from typing import Any, Literal

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, Field, model_validator

from fathom.server.auth import AuthContext, authenticate
from fathom.server.errors import ApiError, envelope
from fathom.server.permissions import Need, forbidden
from fathom.server.routes.accounts import people_admin
from fathom.server.routes.app_access import load_app
from fathom.server.routes.common import ANY_METHOD, object_id, platform_of
from fathom.server.routes.datasets import load_dataset
from fathom.server.typed import ApiModel, ObjectId, OptionalObjectId, answers, parsed
from fathom.store.protocols import MemberRecord, Permission, Role

router = APIRouter(tags=["team"])

#: FastGPT's permission values (read, read+write, read+write+manage bits)
PERMISSION_VALUES: dict[Permission, int] = {"read": 4, "write": 6, "manage": 7}
_BY_VALUE = {value: name for name, value in PERMISSION_VALUES.items()}


class ResourceRef(ApiModel):
    """The app (``appId``, on the app routes) or knowledge base (``datasetId``) the collaborators are of."""

    appId: OptionalObjectId = None
    datasetId: OptionalObjectId = None

    @model_validator(mode="before")
    @classmethod
    def _blank_ids(cls, values: Any) -> Any:
        """null and "" mean absent, so a route that requires the id answers "is required"."""
        if not isinstance(values, dict):
            return values
        return {k: v for k, v in values.items() if k not in ("appId", "datasetId") or v not in (None, "")}


class Grant(ResourceRef):
    permission: Literal["read", "write", "manage"] | Literal[4, 6, 7] = Field(
        description="read, write, manage (or FastGPT's 4, 6, 7)"
    )
    tmbIds: list[str] | None = Field(None, description="The members (non-empty)")
    members: list[str] | None = Field(None, description="FastGPT's older name for tmbIds")

    def permission_name(self) -> Permission:
        return _BY_VALUE[self.permission] if isinstance(self.permission, int) else self.permission

    def member_ids(self) -> list[str]:
        raw = self.tmbIds if self.tmbIds is not None else self.members
        if not raw:
            raise ApiError(400, "missingParams", "tmbIds: a non-empty list of member ids is required")
        return [object_id({"tmbIds": item}, "tmbIds", "member") for item in raw]


class Revoke(ResourceRef):
    id_kinds = {"tmbId": "member"}
    tmbId: ObjectId


class AppResource(ResourceRef):
    appId: ObjectId


class DatasetResource(ResourceRef):
    datasetId: ObjectId


class AppGrant(Grant):
    appId: ObjectId


class DatasetGrant(Grant):
    datasetId: ObjectId


class AppRevoke(Revoke):
    appId: ObjectId


class DatasetRevoke(Revoke):
    datasetId: ObjectId


class MemberRef(ApiModel):
    id_kinds = {"tmbId": "member"}
    tmbId: ObjectId


class RoleChange(MemberRef):
    role: Role


class PermissionBits(BaseModel):
    value: int
    hasReadPer: bool
    hasWritePer: bool
    hasManagePer: bool


class Collaborator(BaseModel):
    tmbId: str
    teamId: str
    name: str
    role: str
    per: Permission
    permission: PermissionBits


class MemberRole(BaseModel):
    tmbId: str
    memberName: str
    role: str


async def _team_member(request: Request, auth: AuthContext, member_id: str) -> MemberRecord:
    member = await platform_of(request).team_admin.member(auth.team_id, member_id)
    if member is None:
        raise ApiError(404, "unExist", f"tmbId: no member {member_id!r} in this team")
    return member


async def _load_resource(request: Request, auth: AuthContext, kind: str, ref: ResourceRef, need: Need) -> str:
    """The id of the app (``appId``) or knowledge base (``datasetId``) the caller may ``need``."""
    field = "appId" if kind == "app" else "datasetId"
    resource_id = ref.appId if kind == "app" else ref.datasetId
    if resource_id is None:
        raise ApiError(400, "missingParams", f"{field}: is required")
    if kind == "app":
        await load_app(request, auth, resource_id, need)
    else:
        await load_dataset(request, auth, resource_id, need)
    return resource_id


async def _list_collaborators(
    request: Request, auth: AuthContext, kind: str, ref: ResourceRef
) -> dict[str, Any]:
    resource_id = await _load_resource(request, auth, kind, ref, "read")
    granted = await platform_of(request).team_admin.collaborators(auth.team_id, kind, resource_id)
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


async def _update_collaborators(
    request: Request, auth: AuthContext, kind: str, grant: Grant
) -> dict[str, Any]:
    resource_id = await _load_resource(request, auth, kind, grant, "manage")
    permission = grant.permission_name()
    members = [await _team_member(request, auth, member_id) for member_id in grant.member_ids()]
    admin = platform_of(request).team_admin
    await admin.set_permission([m.id for m in members], kind, resource_id, permission)
    return envelope(None)


async def _delete_collaborator(
    request: Request, auth: AuthContext, kind: str, revoke: Revoke
) -> dict[str, Any]:
    resource_id = await _load_resource(request, auth, kind, revoke, "manage")
    member = await _team_member(request, auth, revoke.tmbId)
    await platform_of(request).team_admin.set_permission([member.id], kind, resource_id, None)
    return envelope(None)


@router.api_route(
    "/api/core/app/collaborator/list",
    methods=ANY_METHOD,
    summary="Who may use an app",
    responses=answers(list[Collaborator]),
)
async def app_collaborators(
    request: Request, auth: AuthContext = Depends(authenticate), payload: AppResource = parsed(AppResource)
) -> dict[str, Any]:
    return await _list_collaborators(request, auth, "app", payload)


@router.api_route(
    "/api/core/app/collaborator/update",
    methods=ANY_METHOD,
    summary="Grant members a permission on an app",
    responses=answers(None),
)
async def update_app_collaborators(
    request: Request, auth: AuthContext = Depends(authenticate), payload: AppGrant = parsed(AppGrant)
) -> dict[str, Any]:
    return await _update_collaborators(request, auth, "app", payload)


@router.api_route(
    "/api/core/app/collaborator/delete",
    methods=ANY_METHOD,
    summary="Revoke a member's permission on an app",
    responses=answers(None),
)
async def delete_app_collaborator(
    request: Request, auth: AuthContext = Depends(authenticate), payload: AppRevoke = parsed(AppRevoke)
) -> dict[str, Any]:
    return await _delete_collaborator(request, auth, "app", payload)


@router.api_route(
    "/api/core/dataset/collaborator/list",
    methods=ANY_METHOD,
    summary="Who may use a knowledge base",
    responses=answers(list[Collaborator]),
)
async def dataset_collaborators(
    request: Request,
    auth: AuthContext = Depends(authenticate),
    payload: DatasetResource = parsed(DatasetResource),
) -> dict[str, Any]:
    return await _list_collaborators(request, auth, "dataset", payload)


@router.api_route(
    "/api/core/dataset/collaborator/update",
    methods=ANY_METHOD,
    summary="Grant members a permission on a knowledge base",
    responses=answers(None),
)
async def update_dataset_collaborators(
    request: Request, auth: AuthContext = Depends(authenticate), payload: DatasetGrant = parsed(DatasetGrant)
) -> dict[str, Any]:
    return await _update_collaborators(request, auth, "dataset", payload)


@router.api_route(
    "/api/core/dataset/collaborator/delete",
    methods=ANY_METHOD,
    summary="Revoke a member's permission on a knowledge base",
    responses=answers(None),
)
async def delete_dataset_collaborator(
    request: Request,
    auth: AuthContext = Depends(authenticate),
    payload: DatasetRevoke = parsed(DatasetRevoke),
) -> dict[str, Any]:
    return await _delete_collaborator(request, auth, "dataset", payload)


async def _member_to_change(request: Request, auth: AuthContext, member_id: str) -> MemberRecord:
    member = await _team_member(request, auth, member_id)
    if member.role == "owner" and auth.role != "owner":
        raise forbidden("change or remove an owner (owners only)", "api key")
    return member


@router.post(
    "/api/support/user/team/member/updateRole",
    summary="Change a member's role",
    responses=answers(MemberRole),
)
async def update_member_role(
    request: Request, auth: AuthContext = Depends(people_admin), payload: RoleChange = parsed(RoleChange)
) -> dict[str, Any]:
    member = await _member_to_change(request, auth, payload.tmbId)
    role = payload.role
    if role == "owner" and auth.role != "owner":
        raise forbidden("make an owner (owners only)", "api key")
    updated = await platform_of(request).team_admin.set_role(auth.team_id, member.id, role)
    return envelope({"tmbId": updated.id, "memberName": updated.name, "role": updated.role})


@router.delete(
    "/api/support/user/team/member/delete", summary="Remove a member from the team", responses=answers(None)
)
async def delete_member(
    request: Request, auth: AuthContext = Depends(people_admin), payload: MemberRef = parsed(MemberRef)
) -> dict[str, Any]:
    member = await _member_to_change(request, auth, payload.tmbId)
    await platform_of(request).team_admin.remove_member(auth.team_id, member.id)
    return envelope(None)
