"""Teams, members and per-resource permissions."""

from __future__ import annotations

from typing import cast

from sqlalchemy import delete, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from fathom.store.db import Database
from fathom.store.models import Member, ResourcePermission, Team
from fathom.store.protocols import (
    PERMISSIONS,
    ROLES,
    Conflict,
    MemberRecord,
    NotFound,
    Permission,
    Role,
    TeamRecord,
)


def _team_record(row: Team) -> TeamRecord:
    return TeamRecord(id=row.id, name=row.name, created_at=row.created_at)


def _member_record(row: Member) -> MemberRecord:
    role: Role = row.role  # type: ignore[assignment]
    return MemberRecord(id=row.id, team_id=row.team_id, name=row.name, role=role, created_at=row.created_at)


class SqlTeamRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def create_team(self, name: str) -> TeamRecord:
        if not name.strip():
            raise ValueError("team name: must not be empty")
        async with self.db.transaction() as session:
            row = Team(name=name.strip())
            session.add(row)
            await session.flush()
            return _team_record(row)

    async def get_team(self, team_id: str) -> TeamRecord:
        async with self.db.sessions() as session:
            row = await session.get(Team, team_id)
            if row is None:
                raise NotFound(f"team {team_id} not found")
            return _team_record(row)

    async def count_teams(self) -> int:
        async with self.db.sessions() as session:
            return int(await session.scalar(select(func.count()).select_from(Team)) or 0)

    async def first_team(self) -> TeamRecord | None:
        """The oldest team (the root team made on first start), None while there is none."""
        async with self.db.sessions() as session:
            row = await session.scalar(select(Team).order_by(Team.created_at, Team.id).limit(1))
            return None if row is None else _team_record(row)

    async def first_owner(self, team_id: str) -> MemberRecord | None:
        """The team's oldest owner, None when it has none."""
        async with self.db.sessions() as session:
            row = await session.scalar(
                select(Member)
                .where(Member.team_id == team_id, Member.role == "owner")
                .order_by(Member.created_at)
                .limit(1)
            )
            return None if row is None else _member_record(row)

    async def add_member(self, team_id: str, name: str, role: Role = "member") -> MemberRecord:
        if role not in ROLES:
            raise ValueError(f"role: {role!r} is not one of {', '.join(ROLES)}")
        try:
            async with self.db.transaction() as session:
                if await session.get(Team, team_id) is None:
                    raise NotFound(f"team {team_id} not found")
                row = Member(team_id=team_id, name=name, role=role)
                session.add(row)
                await session.flush()
                return _member_record(row)
        except IntegrityError:
            raise Conflict(f"member name {name!r} already exists in team {team_id}") from None

    async def get_member(self, member_id: str) -> MemberRecord:
        async with self.db.sessions() as session:
            row = await session.get(Member, member_id)
            if row is None:
                raise NotFound(f"member {member_id} not found")
            return _member_record(row)

    async def member_role(self, member_id: str) -> Role | None:
        """The member's role, None for no such member: one plain read (a run's permission check asks for
        every knowledge base it searches; an ORM session cost several times as much CPU)."""
        rows = await self.db.read("SELECT role FROM members WHERE id = :id", {"id": member_id})
        return cast(Role, rows[0][0]) if rows else None

    async def list_members(self, team_id: str) -> list[MemberRecord]:
        async with self.db.sessions() as session:
            rows = await session.scalars(
                select(Member).where(Member.team_id == team_id).order_by(Member.created_at)
            )
            return [_member_record(row) for row in rows]

    async def set_role(self, team_id: str, member_id: str, role: Role) -> MemberRecord:
        """Change a member's role; the team's last owner stays an owner (:class:`Conflict`)."""
        if role not in ROLES:
            raise ValueError(f"role: {role!r} is not one of {', '.join(ROLES)}")
        async with self.db.transaction() as session:
            row = await self._member_of(session, team_id, member_id)
            if row.role == "owner" and role != "owner":
                await self._keep_an_owner(session, team_id, "demote")
            row.role = role
            await session.flush()
            return _member_record(row)

    async def remove_member(self, team_id: str, member_id: str) -> None:
        """Delete the member; their keys, password, sessions and grants go with the row (cascade).
        The team's last owner cannot be removed (:class:`Conflict`)."""
        async with self.db.transaction() as session:
            row = await self._member_of(session, team_id, member_id)
            if row.role == "owner":
                await self._keep_an_owner(session, team_id, "remove")
            await session.delete(row)

    @staticmethod
    async def _member_of(session: AsyncSession, team_id: str, member_id: str) -> Member:
        row = await session.get(Member, member_id)
        if row is None or row.team_id != team_id:
            raise NotFound(f"member {member_id} not found")
        return row

    @staticmethod
    async def _keep_an_owner(session: AsyncSession, team_id: str, action: str) -> None:
        owners = await session.scalars(
            select(Member.id).where(Member.team_id == team_id, Member.role == "owner").with_for_update()
        )
        if len(list(owners)) <= 1:
            raise Conflict(f"tmbId: cannot {action} the team's last owner; make another owner first")

    async def list_permissions(
        self, team_id: str, resource_type: str, resource_id: str
    ) -> list[tuple[MemberRecord, Permission]]:
        """The members granted a permission on the resource, oldest member first."""
        async with self.db.sessions() as session:
            rows = await session.execute(
                select(Member, ResourcePermission.permission)
                .join(ResourcePermission, ResourcePermission.member_id == Member.id)
                .where(
                    ResourcePermission.team_id == team_id,
                    ResourcePermission.resource_type == resource_type,
                    ResourcePermission.resource_id == resource_id,
                )
                .order_by(Member.created_at, Member.id)
            )
            return [(_member_record(member), cast(Permission, per)) for member, per in rows]

    async def set_permission(
        self, member_id: str, resource_type: str, resource_id: str, permission: Permission | None
    ) -> None:
        if permission is not None and permission not in PERMISSIONS:
            raise ValueError(f"permission: {permission!r} is not one of {', '.join(PERMISSIONS)}")
        async with self.db.transaction() as session:
            member = await session.get(Member, member_id)
            if member is None:
                raise NotFound(f"member {member_id} not found")
            await session.execute(
                delete(ResourcePermission).where(
                    ResourcePermission.member_id == member_id,
                    ResourcePermission.resource_type == resource_type,
                    ResourcePermission.resource_id == resource_id,
                )
            )
            if permission is not None:
                session.add(
                    ResourcePermission(
                        team_id=member.team_id,
                        member_id=member_id,
                        resource_type=resource_type,
                        resource_id=resource_id,
                        permission=permission,
                    )
                )

    async def get_permission(self, member_id: str, resource_type: str, resource_id: str) -> Permission | None:
        async with self.db.sessions() as session:
            value = await session.scalar(
                select(ResourcePermission.permission).where(
                    ResourcePermission.member_id == member_id,
                    ResourcePermission.resource_type == resource_type,
                    ResourcePermission.resource_id == resource_id,
                )
            )
            return value  # type: ignore[return-value]
