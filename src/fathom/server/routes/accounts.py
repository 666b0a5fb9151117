"""Accounts on FastGPT-style ``/api/support/user/*`` paths: password sign-in into a session cookie,
sign-out, password change, members and invitation links.

- ``account/loginByPassword`` and ``team/invitation/accept`` set the ``fathom_session`` cookie (HttpOnly,
  SameSite=Strict, Secure over https) and answer the session's ``csrfToken``, which every later
  cookie-authenticated request sends as ``X-CSRF-Token`` (see :mod:`fathom.server.auth`).
- Passwords are read from the JSON body only, never from the query string (which servers log).
- Owners and admins (with a team-wide key or a session) list members, add them and make invitations;
  admins cannot make owners.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field, StringConstraints

from fathom.security.accounts import PASSWORD_MAX, SignedIn
from fathom.server.auth import SESSION_COOKIE, AuthContext, authenticate, authenticate_identity
from fathom.server.errors import ApiError, envelope
from fathom.server.permissions import forbidden, require_team_key
from fathom.server.routes.common import iso, json_object, platform_of
from fathom.server.typed import ApiModel, NoParams, ObjectId, answers, parsed
from fathom.store.protocols import InvitationRecord, NotFound, UserRecord

router = APIRouter(tags=["accounts"])

INVITE_PATH = "/invite/"
# the account service checks these fields itself (FastGPT's rules, its messages); the models bound them
Username = Annotated[str, StringConstraints(max_length=200)]
Password = Annotated[str, StringConstraints(max_length=PASSWORD_MAX)]
InviteToken = Annotated[str, StringConstraints(max_length=200)]
RoleName = Annotated[str, StringConstraints(max_length=32)]


class PasswordLogin(ApiModel):
    username: Username | None = Field(None, description="Required")
    password: Password | None = Field(None, description="Required; in the JSON body, never the URL")


class PasswordChange(ApiModel):
    oldPsw: Password | None = Field(None, description="The current password (required)")
    newPsw: Password | None = Field(None, description="The new password (required)")


class NewMember(ApiModel):
    username: Username | None = Field(None, description="Required")
    password: Password | None = Field(None, description="Required")
    role: RoleName | None = Field(None, description="owner, admin or member (default member)")


class NewInvitation(ApiModel):
    role: RoleName | None = Field(None, description="owner, admin or member (default member)")
    expiresHours: float | None = Field(None, description="Lifetime in hours (default 72, at most 720)")


class InvitationRef(ApiModel):
    id_kinds = {"id": "invitation"}
    id: ObjectId


class InvitationToken(ApiModel):
    token: InviteToken | None = Field(None, description="The link's token (required)")


class AcceptInvitation(InvitationToken):
    username: Username | None = Field(None, description="Required")
    password: Password | None = Field(None, description="Required")


class UserView(BaseModel):
    userId: str
    username: str
    tmbId: str
    teamId: str
    role: str
    createTime: str | None


class SignedInView(BaseModel):
    user: UserView
    csrfToken: str = Field(description="Send it as X-CSRF-Token with every cookie-authenticated request")
    expiresAt: str | None


class Identity(BaseModel):
    userId: str | None
    username: str | None
    tmbId: str
    teamId: str
    role: str
    appId: str | None
    keyId: str | None
    csrfToken: str | None


class MemberView(BaseModel):
    tmbId: str
    memberName: str
    username: str | None
    role: str
    createTime: str | None


class InvitationView(BaseModel):
    id_: str = Field(alias="_id")
    role: str
    createTime: str | None
    expiresAt: str | None
    usedAt: str | None
    usedBy: str | None
    createdBy: str | None


class NewInvitationView(InvitationView):
    token: str = Field(description="Shown this once")
    link: str = Field(examples=["/invite/<token>"])


class InvitationOffer(BaseModel):
    teamName: str
    role: str
    expiresAt: str | None


async def _body_params(request: Request) -> dict[str, Any]:
    """The JSON body's fields (a password in the query string is refused)."""
    if "password" in request.query_params or "newPsw" in request.query_params:
        raise ApiError(400, "invalidParams", "password: send it in the JSON body, never in the URL")
    return await json_object(request)


def _client_ip(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def _user_view(user: UserRecord) -> dict[str, Any]:
    return {
        "userId": user.id,
        "username": user.username,
        "tmbId": user.member_id,
        "teamId": user.team_id,
        "role": user.role,
        "createTime": iso(user.created_at),
    }


def _signed_in_response(request: Request, signed: SignedIn) -> JSONResponse:
    data = {
        "user": _user_view(signed.user),
        "csrfToken": signed.session.csrf_token,
        "expiresAt": iso(signed.session.expires_at),
    }
    response = JSONResponse(envelope(data))
    ttl = int((signed.session.expires_at - signed.session.created_at).total_seconds())
    response.set_cookie(
        SESSION_COOKIE,
        signed.token,
        max_age=ttl,
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return response


def _require_people_admin(auth: AuthContext) -> None:
    require_team_key(auth, "manage members", "api key")
    if auth.role not in ("owner", "admin"):
        raise forbidden("manage members (owners and admins only)", "api key")


async def people_admin(request: Request) -> AuthContext:
    """The caller, when it may manage members: checked before the body is validated."""
    auth = await authenticate(request)
    _require_people_admin(auth)
    return auth


def _invitation_view(record: InvitationRecord) -> dict[str, Any]:
    return {
        "_id": record.id,
        "role": record.role,
        "createTime": iso(record.created_at),
        "expiresAt": iso(record.expires_at),
        "usedAt": iso(record.used_at),
        "usedBy": record.used_by,
        "createdBy": record.created_by,
    }


@router.post(
    "/api/support/user/account/loginByPassword",
    summary="Sign in with a username and password",
    responses=answers(SignedInView),
)
async def login_by_password(
    request: Request, payload: PasswordLogin = parsed(PasswordLogin, _body_params)
) -> JSONResponse:
    """Sets the session cookie; rate-limited per username and per client IP (429 with Retry-After)."""
    signed = await platform_of(request).accounts.sign_in(
        payload.username, payload.password, _client_ip(request)
    )
    return _signed_in_response(request, signed)


@router.get(
    "/api/support/user/account/tokenLogin",
    summary="Who is signed in (and the CSRF token)",
    responses=answers(Identity),
)
async def token_login(
    request: Request, auth: AuthContext = Depends(authenticate_identity), _: NoParams = parsed(NoParams)
) -> dict[str, Any]:
    username = auth.username
    if username is None:  # a key: its member's user, if it has one
        user = await platform_of(request).team_admin.user_of_member(auth.member_id)
        username = user.username if user else None
    return envelope(
        {
            "userId": auth.user_id,
            "username": username,
            "tmbId": auth.member_id,
            "teamId": auth.team_id,
            "role": auth.role,
            "appId": auth.app_id,
            "keyId": auth.api_key_id,
            "csrfToken": auth.csrf_token,
        }
    )


@router.post(
    "/api/support/user/account/loginout", summary="Sign out (end this session)", responses=answers(None)
)
async def sign_out(
    request: Request, auth: AuthContext = Depends(authenticate), _: NoParams = parsed(NoParams)
) -> JSONResponse:
    require_team_key(auth, "sign out", "api key")
    if auth.session_id is None:
        raise ApiError(
            400, "invalidParams", "session: sign-out ends a console session; revoke a key with openapi/delete"
        )
    await platform_of(request).accounts.sign_out(auth.session_id)
    response = JSONResponse(envelope(None))
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict")
    return response


@router.post(
    "/api/support/user/account/updatePasswordByOld", summary="Change your password", responses=answers(None)
)
async def change_password(
    request: Request,
    auth: AuthContext = Depends(authenticate),
    payload: PasswordChange = parsed(PasswordChange, _body_params),
) -> dict[str, Any]:
    """Needs the current password; every other session of the user ends (this one stays)."""
    require_team_key(auth, "change a password", "api key")
    platform = platform_of(request)
    user = await platform.team_admin.user_of_member(auth.member_id)
    if user is None:
        raise ApiError(400, "invalidParams", "user: this key's member has no password to change")
    await platform.accounts.change_password(user, auth.session_id, payload.oldPsw, payload.newPsw)
    return envelope(None)


@router.get(
    "/api/support/user/team/member/list", summary="Members of the team", responses=answers(list[MemberView])
)
async def list_members(
    request: Request, auth: AuthContext = Depends(people_admin), _: NoParams = parsed(NoParams)
) -> dict[str, Any]:
    members = await platform_of(request).team_admin.members(auth.team_id)
    return envelope(
        [
            {
                "tmbId": m.member.id,
                "memberName": m.member.name,
                "username": m.username,
                "role": m.member.role,
                "createTime": iso(m.member.created_at),
            }
            for m in members
        ]
    )


@router.post(
    "/api/support/user/team/member/create",
    summary="Add a member with a password",
    responses=answers(UserView),
)
async def create_member(
    request: Request,
    auth: AuthContext = Depends(people_admin),
    payload: NewMember = parsed(NewMember, _body_params),
) -> dict[str, Any]:
    user = await platform_of(request).accounts.create_user(
        auth.team_id, auth.role, payload.username, payload.password, payload.role
    )
    return envelope(_user_view(user))


@router.post(
    "/api/support/user/team/invitation/create",
    summary="Make an invitation link",
    responses=answers(NewInvitationView),
)
async def create_invitation(
    request: Request,
    auth: AuthContext = Depends(people_admin),
    payload: NewInvitation = parsed(NewInvitation),
) -> dict[str, Any]:
    """Answer the link's token exactly once (only its hash is stored); ``link`` is the console path."""
    record, token = await platform_of(request).accounts.create_invitation(
        auth.team_id, auth.member_id, auth.role, payload.role, payload.expiresHours
    )
    return envelope(_invitation_view(record) | {"token": token, "link": f"{INVITE_PATH}{token}"})


@router.get(
    "/api/support/user/team/invitation/list",
    summary="Invitation links of the team",
    responses=answers(list[InvitationView]),
)
async def list_invitations(
    request: Request, auth: AuthContext = Depends(people_admin), _: NoParams = parsed(NoParams)
) -> dict[str, Any]:
    records = await platform_of(request).accounts.list_invitations(auth.team_id)
    return envelope([_invitation_view(r) for r in records])


@router.delete(
    "/api/support/user/team/invitation/delete", summary="Revoke an invitation link", responses=answers(None)
)
async def delete_invitation(
    request: Request,
    auth: AuthContext = Depends(people_admin),
    payload: InvitationRef = parsed(InvitationRef),
) -> dict[str, Any]:
    invitation_id = payload.id
    try:
        await platform_of(request).accounts.delete_invitation(auth.team_id, invitation_id)
    except NotFound:
        raise ApiError(404, "unExist", f"id: no invitation {invitation_id!r} in this team") from None
    return envelope(None)


@router.get(
    "/api/support/user/team/invitation/info",
    summary="What an invitation link offers",
    responses=answers(InvitationOffer),
)
async def invitation_info(
    request: Request, payload: InvitationToken = parsed(InvitationToken)
) -> dict[str, Any]:
    """Public (the link is the credential): the team's name, the role and the expiry."""
    offer = await platform_of(request).team_admin.invitation_offer(payload.token)
    record = offer.invitation
    return envelope({"teamName": offer.team_name, "role": record.role, "expiresAt": iso(record.expires_at)})


@router.post(
    "/api/support/user/team/invitation/accept",
    summary="Join with an invitation link",
    responses=answers(SignedInView),
)
async def accept_invitation(
    request: Request, payload: AcceptInvitation = parsed(AcceptInvitation, _body_params)
) -> JSONResponse:
    """Public: the link's token, a username and a password; creates the member and signs them in."""
    signed = await platform_of(request).accounts.accept_invitation(
        payload.token, payload.username, payload.password, _client_ip(request)
    )
    return _signed_in_response(request, signed)
