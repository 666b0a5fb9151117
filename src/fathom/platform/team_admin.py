"""A team's people and keys: members and their roles, collaborators of apps and knowledge bases, API keys,
invitation offers and the usage report. The HTTP routes (``support/user/*``, ``support/openapi/*``,
``core/*/collaborator/*``, ``support/usage/*``) check who is asking and call these; the repositories
stay behind this service."""

from __future__ import annotations

from dataclasses import dataclass

from fathom.security.accounts import AccountService
from fathom.store.knowledge import SqlDatasetRepository
from fathom.store.protocols import (
    ApiKeyRecord,
    BillTotals,
    InvitationRecord,
    MemberRecord,
    NotFound,
    Permission,
    Role,
    UsageSummaryRow,
    UserRecord,
)
from fathom.store.repositories import (
    SqlApiKeyRepository,
    SqlAppRepository,
    SqlTeamRepository,
    SqlUsageRepository,
)

_RANK: dict[Permission, int] = {"read": 1, "write": 2, "manage": 3}


@dataclass(frozen=True)
class MemberWithUser:
    """A member of the team and the username of their password account (None: no account)."""

    member: MemberRecord
    username: str | None


@dataclass(frozen=True)
class InvitationOffer:
    """What an invitation link offers: its record and the name of the team it joins."""

    invitation: InvitationRecord
    team_name: str


@dataclass(frozen=True)
class UsageReport:
    """The usage rows of a team's last days, its training bills' totals and the names of its apps."""

    rows: list[UsageSummaryRow]
    bills: list[BillTotals]
    app_names: dict[str, str]


class TeamAdmin:
    """The use cases of a team's administration, over the team, key, app and usage repositories."""

    def __init__(
        self,
        teams: SqlTeamRepository,
        api_keys: SqlApiKeyRepository,
        apps: SqlAppRepository,
        usage: SqlUsageRepository,
        accounts: AccountService,
        datasets: SqlDatasetRepository,
    ) -> None:
        self._datasets = datasets
        self._teams = teams
        self._keys = api_keys
        self._apps = apps
        self._usage = usage
        self._accounts = accounts

    # members

    async def members(self, team_id: str) -> list[MemberWithUser]:
        """The team's members, each with the username of their password account."""
        users = {u.member_id: u for u in await self._accounts.list_users(team_id)}
        return [
            MemberWithUser(m, users[m.id].username if m.id in users else None)
            for m in await self._teams.list_members(team_id)
        ]

    async def member(self, team_id: str, member_id: str) -> MemberRecord | None:
        """The member, when it is one of this team's (None otherwise: another team's is not found)."""
        try:
            member = await self._teams.get_member(member_id)
        except NotFound:
            return None
        return member if member.team_id == team_id else None

    async def user_of_member(self, member_id: str) -> UserRecord | None:
        """The password account of a member (None: a member with keys only)."""
        return await self._accounts.store.user_by_member(member_id)

    async def set_role(self, team_id: str, member_id: str, role: Role) -> MemberRecord:
        """Change a member's role; their keys' next request reads the new role."""
        updated = await self._teams.set_role(team_id, member_id, role)
        self._keys.forget_member(member_id)
        return updated

    async def remove_member(self, team_id: str, member_id: str) -> None:
        """Remove a member; their keys fail on their very next request."""
        await self._teams.remove_member(team_id, member_id)
        self._keys.forget_member(member_id)

    async def invitation_offer(self, token: object) -> InvitationOffer:
        """What an invitation link offers (``AccountError`` when the link is invalid or used up)."""
        record = await self._accounts.invitation(token)
        team = await self._teams.get_team(record.team_id)
        return InvitationOffer(record, team.name)

    # collaborators

    async def collaborators(
        self, team_id: str, kind: str, resource_id: str
    ) -> list[tuple[MemberRecord, Permission]]:
        """Who holds a permission on the app or knowledge base, and which."""
        return await self._teams.list_permissions(team_id, kind, resource_id)

    async def set_permission(
        self, member_ids: list[str], kind: str, resource_id: str, permission: Permission | None
    ) -> None:
        """Grant (or, with None, revoke) one permission to each member on the resource."""
        for member_id in member_ids:
            await self._teams.set_permission(member_id, kind, resource_id, permission)

    async def may(
        self,
        member_id: str,
        role: str,
        kind: str,
        resource_id: str,
        owner_member_id: str | None,
        need: Permission,
    ) -> bool:
        """Whether a member may ``need`` the resource: owners and admins may everything, its creator
        manages it, else a granted permission at least ``need`` (for a knowledge base: on it, or on a
        folder above it, or they created that folder)."""
        if role in ("owner", "admin") or owner_member_id == member_id:
            return True
        granted = await self._teams.get_permission(member_id, kind, resource_id)
        if granted is not None and _RANK[granted] >= _RANK[need]:
            return True
        if kind != "dataset":
            return False
        for folder_id, creator, _ in (await self._datasets.lineage(resource_id))[1:]:
            if creator == member_id:
                return True
            granted = await self._teams.get_permission(member_id, "dataset", folder_id)
            if granted is not None and _RANK[granted] >= _RANK[need]:
                return True
        return False

    async def dataset_owner(self, dataset_id: str) -> str | None:
        """The member who created the knowledge base (they may manage it whatever their role)."""
        return await self._datasets.owner_of(dataset_id)

    # API keys

    async def create_key(
        self, team_id: str, member_id: str, *, name: str, app_id: str | None
    ) -> tuple[ApiKeyRecord, str]:
        """A new key and its plain text (shown once); a key limited to an app needs an app of this team
        (``NotFound`` otherwise)."""
        if app_id is not None:
            await self._apps.get_app(team_id, app_id)
        return await self._keys.create_key(team_id, member_id, name=name, app_id=app_id)

    async def list_keys(self, team_id: str, app_id: str | None = None) -> list[ApiKeyRecord]:
        return await self._keys.list_keys(team_id, app_id)

    async def key(self, team_id: str, key_id: str) -> ApiKeyRecord | None:
        """The team's key with this id (revoked ones included), None when there is none."""
        return next((r for r in await self._keys.list_keys(team_id) if r.id == key_id), None)

    async def revoke_key(self, team_id: str, key_id: str) -> None:
        await self._keys.revoke_key(team_id, key_id)

    async def identify_key(self, plain_key: str) -> tuple[ApiKeyRecord, Role | None] | None:
        """The live key with this value and its member's role (None: the member is gone); None for an
        unknown or revoked key. Cached briefly; a revoke drops it at once."""
        return await self._keys.find_identity(plain_key)

    async def flush_key_usage(self) -> None:
        """Write the keys' usage counters still held behind (the server's shutdown)."""
        await self._keys.aclose()

    # usage

    async def usage_report(self, team_id: str, *, app_id: str | None, days: int) -> UsageReport:
        """Usage per (day, app) of the last ``days`` days; training bills' totals only for the whole team
        (none for one app)."""
        rows = await self._usage.summarize(team_id, app_id=app_id, days=days)
        bills = [] if app_id else await self._usage.bill_totals(team_id, days=days)
        names = {app.id: app.name for app in await self._apps.list_apps(team_id)}
        return UsageReport(rows, bills, names)
