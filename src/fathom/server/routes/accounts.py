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

import json
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from fathom.security.accounts import AccountError, SignedIn
from fathom.server.auth import SESSION_COOKIE, AuthContext, authenticate, authenticate_identity
from fathom.server.errors import ApiError, envelope, forbidden_error
from fathom.server.permissions import forbidden, require_team_key
from fathom.server.routes.common import iso, object_id, params, platform_of
from fathom.store.protocols import InvitationRecord, NotFound, UserRecord

router = APIRouter(tags=["accounts"])

INVITE_PATH = "/invite/"


def account_error(exc: AccountError) -> ApiError:
    text = f"{exc.field}: {exc}" if exc.field else str(exc)
    if exc.kind == "rate_limited":
        headers = {"Retry-After": str(exc.retry_after or 1)}
        return ApiError(429, "tooManyRequests", text, headers=headers)
    if exc.kind == "credentials" and exc.field is None:
        return ApiError(401, "unAuthorization", text)
    if exc.kind == "gone":
        return ApiError(410, "invitationInvalid", text)
    if exc.kind == "taken":
        return ApiError(409, "conflict", text)
    if exc.kind == "forbidden":
        return forbidden_error("api key", str(exc))
    return ApiError(400, "invalidParams", text)


async def body_params(request: Request) -> dict[str, Any]:
    """The JSON body's fields (a password in the query string is refused)."""
    if "password" in request.query_params or "newPsw" in request.query_params:
        raise ApiError(400, "invalidParams", "password: send it in the JSON body, never in the URL")
    raw = await request.body()
    try:
        body = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as exc:
        raise ApiError(400, "invalidParams", f"body: not valid JSON ({exc.msg})") from None
    if not isinstance(body, dict):
        raise ApiError(400, "invalidParams", "body: must be a JSON object")
    return body


def client_ip(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def user_view(user: UserRecord) -> dict[str, Any]:
    return {
        "userId": user.id,
        "username": user.username,
        "tmbId": user.member_id,
        "teamId": user.team_id,
        "role": user.role,
        "createTime": iso(user.created_at),
    }


def signed_in_response(request: Request, signed: SignedIn) -> JSONResponse:
    data = {
        "user": user_view(signed.user),
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


def require_people_admin(auth: AuthContext) -> None:
    require_team_key(auth, "manage members", "api key")
    if auth.role not in ("owner", "admin"):
        raise forbidden("manage members (owners and admins only)", "api key")


def invitation_view(record: InvitationRecord) -> dict[str, Any]:
    return {
        "_id": record.id,
        "role": record.role,
        "createTime": iso(record.created_at),
        "expiresAt": iso(record.expires_at),
        "usedAt": iso(record.used_at),
        "usedBy": record.used_by,
        "createdBy": record.created_by,
    }


@router.post("/api/support/user/account/loginByPassword", summary="Sign in with a username and password")
async def login_by_password(request: Request) -> JSONResponse:
    """Sets the session cookie; rate-limited per username and per client IP (429 with Retry-After)."""
    values = await body_params(request)
    try:
        signed = await platform_of(request).accounts.sign_in(
            values.get("username"), values.get("password"), client_ip(request)
        )
    except AccountError as exc:
        raise account_error(exc) from None
    return signed_in_response(request, signed)


@router.get("/api/support/user/account/tokenLogin", summary="Who is signed in (and the CSRF token)")
async def token_login(request: Request, auth: AuthContext = Depends(authenticate_identity)) -> dict[str, Any]:
    username = auth.username
    if username is None:  # a key: its member's user, if it has one
        user = await platform_of(request).accounts.store.user_by_member(auth.member_id)
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


@router.post("/api/support/user/account/loginout", summary="Sign out (end this session)")
async def sign_out(request: Request, auth: AuthContext = Depends(authenticate)) -> JSONResponse:
    require_team_key(auth, "sign out", "api key")
    if auth.session_id is None:
        raise ApiError(
            400, "invalidParams", "session: sign-out ends a console session; revoke a key with openapi/delete"
        )
    await platform_of(request).accounts.sign_out(auth.session_id)
    response = JSONResponse(envelope(None))
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict")
    return response


@router.post("/api/support/user/account/updatePasswordByOld", summary="Change your password")
async def change_password(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    """Needs the current password; every other session of the user ends (this one stays)."""
    require_team_key(auth, "change a password", "api key")
    values = await body_params(request)
    accounts = platform_of(request).accounts
    user = await accounts.store.user_by_member(auth.member_id)
    if user is None:
        raise ApiError(400, "invalidParams", "user: this key's member has no password to change")
    try:
        await accounts.change_password(user, auth.session_id, values.get("oldPsw"), values.get("newPsw"))
    except AccountError as exc:
        raise account_error(exc) from None
    return envelope(None)


@router.get("/api/support/user/team/member/list", summary="Members of the team")
async def list_members(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    require_people_admin(auth)
    platform = platform_of(request)
    users = {u.member_id: u for u in await platform.accounts.list_users(auth.team_id)}
    members = await platform.teams.list_members(auth.team_id)
    return envelope(
        [
            {
                "tmbId": m.id,
                "memberName": m.name,
                "username": users[m.id].username if m.id in users else None,
                "role": m.role,
                "createTime": iso(m.created_at),
            }
            for m in members
        ]
    )


@router.post("/api/support/user/team/member/create", summary="Add a member with a password")
async def create_member(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    require_people_admin(auth)
    values = await body_params(request)
    try:
        user = await platform_of(request).accounts.create_user(
            auth.team_id, auth.role, values.get("username"), values.get("password"), values.get("role")
        )
    except AccountError as exc:
        raise account_error(exc) from None
    return envelope(user_view(user))


@router.post("/api/support/user/team/invitation/create", summary="Make an invitation link")
async def create_invitation(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    """Answer the link's token exactly once (only its hash is stored); ``link`` is the console path."""
    require_people_admin(auth)
    values = await params(request)
    try:
        record, token = await platform_of(request).accounts.create_invitation(
            auth.team_id, auth.member_id, auth.role, values.get("role"), values.get("expiresHours")
        )
    except AccountError as exc:
        raise account_error(exc) from None
    return envelope(invitation_view(record) | {"token": token, "link": f"{INVITE_PATH}{token}"})


@router.get("/api/support/user/team/invitation/list", summary="Invitation links of the team")
async def list_invitations(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    require_people_admin(auth)
    records = await platform_of(request).accounts.list_invitations(auth.team_id)
    return envelope([invitation_view(r) for r in records])


@router.delete("/api/support/user/team/invitation/delete", summary="Revoke an invitation link")
async def delete_invitation(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    require_people_admin(auth)
    invitation_id = object_id(await params(request), "id")
    try:
        await platform_of(request).accounts.delete_invitation(auth.team_id, invitation_id)
    except NotFound:
        raise ApiError(404, "unExist", f"id: no invitation {invitation_id!r} in this team") from None
    return envelope(None)


@router.get("/api/support/user/team/invitation/info", summary="What an invitation link offers")
async def invitation_info(request: Request) -> dict[str, Any]:
    """Public (the link is the credential): the team's name, the role and the expiry."""
    values = await params(request)
    platform = platform_of(request)
    try:
        record = await platform.accounts.invitation(values.get("token"))
    except AccountError as exc:
        raise account_error(exc) from None
    team = await platform.teams.get_team(record.team_id)
    return envelope({"teamName": team.name, "role": record.role, "expiresAt": iso(record.expires_at)})


@router.post("/api/support/user/team/invitation/accept", summary="Join with an invitation link")
async def accept_invitation(request: Request) -> JSONResponse:
    """Public: the link's token, a username and a password; creates the member and signs them in."""
    values = await body_params(request)
    try:
        signed = await platform_of(request).accounts.accept_invitation(
            values.get("token"), values.get("username"), values.get("password"), client_ip(request)
        )
    except AccountError as exc:
        raise account_error(exc) from None
    return signed_in_response(request, signed)
