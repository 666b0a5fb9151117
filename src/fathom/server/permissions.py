"""Who may do what: team roles, per-resource permissions, app-scoped keys.

- A resource of another team is answered as "not found" (404), so its existence never leaks.
- Owners and admins may do everything in their team. A member may read, write or manage a resource
  when a permission row grants it, or when the member created the resource (manage).
- A knowledge base or folder inside a folder inherits: a grant on (or the creation of) any folder above
  it counts for it, as FastGPT's ``inheritPermission``.
- A key limited to one app may use that app (chat, its history) and nothing else: other apps and every
  knowledge base are 403 for it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from fathom.platform import Platform
from fathom.server.auth import AuthContext
from fathom.server.errors import ApiError, forbidden_error

Need = Literal["read", "write", "manage"]


def forbidden(what: str, kind: str = "app") -> ApiError:
    """403 with FastGPT's "not authorised" error for ``kind`` (``app``, ``dataset``, ``api key``)."""
    return forbidden_error(kind, f"this key may not {what}")


def require_team_key(auth: AuthContext, what: str, kind: str = "app") -> None:
    """Refuse keys limited to one app for team-wide routes."""
    if auth.key_app_bound:
        raise forbidden(f"{what} (it is limited to app {auth.app_id})", kind)


async def require_permission(
    platform: Platform,
    auth: AuthContext,
    resource_type: str,
    resource_id: str,
    owner_member_id: str | None,
    need: Need,
) -> None:
    """Raise 403 unless the caller's role or a permission grants ``need`` on the resource."""
    if not await has_permission(platform, auth, resource_type, resource_id, owner_member_id, need):
        raise forbidden(f"{need} {resource_type} {resource_id}", resource_type)


async def has_permission(
    platform: Platform,
    auth: AuthContext,
    resource_type: str,
    resource_id: str,
    owner_member_id: str | None,
    need: Need,
) -> bool:
    """Whether the caller's role or a permission grants ``need`` on the resource (for a knowledge base:
    on it or on a folder above it)."""
    return await platform.team_admin.may(
        auth.member_id, auth.role, resource_type, resource_id, owner_member_id, need
    )


class PermissionView(BaseModel):
    """FastGPT's permission object of a resource the caller can read (what :func:`permission_view` builds)."""

    value: int
    isOwner: bool
    hasManagePer: bool
    hasWritePer: bool
    hasReadPer: bool


def permission_view(auth: AuthContext, owner_member_id: str | None) -> dict[str, object]:
    """FastGPT's permission object for a resource the caller can at least read."""
    is_owner = auth.role == "owner" or owner_member_id == auth.member_id
    manage = is_owner or auth.role == "admin"
    return {
        "value": 4294967295 if manage else 4,
        "isOwner": is_owner,
        "hasManagePer": manage,
        "hasWritePer": manage,
        "hasReadPer": True,
    }
