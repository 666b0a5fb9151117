"""Accounts: users (a password hash per member), console sessions, invitations, sign-in attempts.

Tokens (session cookies, invitation links) are stored only as SHA-256 hashes; the caller hashes them.
A sign-in attempt counter is incremented and read back in one statement (``INSERT … ON CONFLICT DO
UPDATE … RETURNING``, on SQLite and PostgreSQL alike): the row is locked while it changes, so of N
concurrent attempts each reads a different count and no two can both see the last one allowed.
"""

from __future__ import annotations

from datetime import datetime
from typing import cast

from sqlalchemy import Table, case, delete, literal, select, tuple_, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from fathom.store.db import Database
from fathom.store.models import (
    Invitation,
    Member,
    SignInAttempts,
    Team,
    User,
    UserSession,
    UTCDateTime,
    utcnow,
)
from fathom.store.protocols import (
    AttemptCount,
    Conflict,
    InvitationRecord,
    NotFound,
    Role,
    SessionRecord,
    UserRecord,
)


def _user_record(user: User, member: Member) -> UserRecord:
    role: Role = member.role  # type: ignore[assignment]
    return UserRecord(
        id=user.id,
        member_id=member.id,
        team_id=member.team_id,
        username=user.username,
        role=role,
        password_hash=user.password_hash,
        created_at=user.created_at,
    )


def _session_record(row: UserSession) -> SessionRecord:
    return SessionRecord(
        id=row.id,
        user_id=row.user_id,
        csrf_token=row.csrf_token,
        client_ip=row.client_ip,
        expires_at=row.expires_at,
        created_at=row.created_at,
    )


def _invitation_record(row: Invitation) -> InvitationRecord:
    role: Role = row.role  # type: ignore[assignment]
    return InvitationRecord(
        id=row.id,
        team_id=row.team_id,
        role=role,
        created_by=row.created_by,
        expires_at=row.expires_at,
        used_at=row.used_at,
        used_by=row.used_by,
        created_at=row.created_at,
    )


def _taken(username: str) -> Conflict:
    return Conflict(f"username {username!r} is taken")


class SqlAccountRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    # users

    async def create_user(self, member_id: str, username: str, password_hash: str) -> UserRecord:
        """A password for an existing member (the root user on first start)."""
        try:
            async with self.db.transaction() as session:
                member = await session.get(Member, member_id)
                if member is None:
                    raise NotFound(f"member {member_id} not found")
                user = User(member_id=member_id, username=username, password_hash=password_hash)
                session.add(user)
                await session.flush()
                return _user_record(user, member)
        except IntegrityError:
            raise _taken(username) from None

    async def create_member_user(
        self, team_id: str, username: str, role: Role, password_hash: str
    ) -> UserRecord:
        """A new member of the team named ``username``, and its user, in one transaction."""
        try:
            async with self.db.transaction() as session:
                if await session.get(Team, team_id) is None:
                    raise NotFound(f"team {team_id} not found")
                return await self._add_member_user(session, team_id, username, role, password_hash)
        except IntegrityError:
            raise _taken(username) from None

    async def _add_member_user(
        self, session: AsyncSession, team_id: str, username: str, role: Role, password_hash: str
    ) -> UserRecord:
        member = Member(team_id=team_id, name=username, role=role)
        session.add(member)
        await session.flush()
        user = User(member_id=member.id, username=username, password_hash=password_hash)
        session.add(user)
        await session.flush()
        return _user_record(user, member)

    async def user_by_username(self, username: str) -> UserRecord | None:
        async with self.db.sessions() as session:
            row = (
                await session.execute(
                    select(User, Member)
                    .join(Member, Member.id == User.member_id)
                    .where(User.username == username)
                )
            ).first()
            return None if row is None else _user_record(row[0], row[1])

    async def user_by_member(self, member_id: str) -> UserRecord | None:
        async with self.db.sessions() as session:
            row = (
                await session.execute(
                    select(User, Member)
                    .join(Member, Member.id == User.member_id)
                    .where(Member.id == member_id)
                )
            ).first()
            return None if row is None else _user_record(row[0], row[1])

    async def list_users(self, team_id: str) -> list[UserRecord]:
        async with self.db.sessions() as session:
            rows = await session.execute(
                select(User, Member)
                .join(Member, Member.id == User.member_id)
                .where(Member.team_id == team_id)
                .order_by(User.created_at)
            )
            return [_user_record(user, member) for user, member in rows]

    async def set_password(self, user_id: str, password_hash: str, *, keep_session_id: str | None) -> None:
        """Store a new hash and delete every session of the user but ``keep_session_id``."""
        async with self.db.transaction() as session:
            user = await session.get(User, user_id)
            if user is None:
                raise NotFound(f"user {user_id} not found")
            user.password_hash = password_hash
            user.password_changed_at = utcnow()
            condition = UserSession.user_id == user_id
            if keep_session_id is not None:
                condition = condition & (UserSession.id != keep_session_id)
            await session.execute(delete(UserSession).where(condition))

    # sessions

    async def create_session(
        self, user_id: str, token_hash: str, csrf_token: str, client_ip: str, expires_at: datetime
    ) -> SessionRecord:
        async with self.db.transaction() as session:
            # a sign-in also clears the user's expired sessions, so the table does not grow forever
            await session.execute(
                delete(UserSession).where(UserSession.user_id == user_id, UserSession.expires_at <= utcnow())
            )
            row = UserSession(
                user_id=user_id,
                token_hash=token_hash,
                csrf_token=csrf_token,
                client_ip=client_ip[:64],
                expires_at=expires_at,
            )
            session.add(row)
            await session.flush()
            return _session_record(row)

    async def session_by_token_hash(
        self, token_hash: str, now: datetime
    ) -> tuple[SessionRecord, UserRecord] | None:
        """The live session of a cookie and its user (None when unknown, signed out or expired)."""
        async with self.db.sessions() as session:
            row = (
                await session.execute(
                    select(UserSession, User, Member)
                    .join(User, User.id == UserSession.user_id)
                    .join(Member, Member.id == User.member_id)
                    .where(UserSession.token_hash == token_hash, UserSession.expires_at > now)
                )
            ).first()
            return None if row is None else (_session_record(row[0]), _user_record(row[1], row[2]))

    async def delete_session(self, session_id: str) -> None:
        async with self.db.transaction() as session:
            await session.execute(delete(UserSession).where(UserSession.id == session_id))

    # sign-in attempts (the lock-out)

    async def count_attempts(
        self, keys: dict[str, str], now: datetime, window_start: datetime
    ) -> dict[str, AttemptCount]:
        """Count one attempt under each ``scope: key`` (in the order given) and answer each count with
        the start of its window; a window that started at or before ``window_start`` starts again at
        ``now`` with this attempt. Counters whose window ended go first."""
        table = cast(Table, SignInAttempts.__table__)
        maker = pg_insert if self.db.dialect == "postgresql" else sqlite_insert
        counts: dict[str, AttemptCount] = {}
        await self._prune_attempts(window_start)
        async with self.db.transaction() as session:  # user row, then ip row: one lock order for all
            for scope, key in keys.items():
                insert = maker(table).values(scope=scope, key=key[:128], count=1, window_started_at=now)
                ended = table.c.window_started_at <= window_start
                statement = insert.on_conflict_do_update(
                    index_elements=["scope", "key"],
                    set_={
                        "count": case((ended, 1), else_=table.c.count + 1),
                        "window_started_at": case(
                            (ended, literal(now, UTCDateTime())), else_=table.c.window_started_at
                        ),
                    },
                ).returning(table.c.count, table.c.window_started_at)
                count, started = (await session.execute(statement)).one()
                counts[scope] = AttemptCount(int(count), started)
        return counts

    async def _prune_attempts(self, window_start: datetime) -> None:
        """Delete counters whose window ended, in a transaction of their own that never waits: on
        PostgreSQL a row another sign-in holds is skipped (a later prune takes it), so pruning can never
        be part of a lock cycle with the counting transactions."""
        stale = SignInAttempts.window_started_at <= window_start
        async with self.db.transaction() as session:
            if self.db.is_postgres:
                held_elsewhere = (
                    select(SignInAttempts.scope, SignInAttempts.key)
                    .where(stale)
                    .limit(1000)
                    .with_for_update(skip_locked=True)
                )
                key = tuple_(SignInAttempts.scope, SignInAttempts.key)
                await session.execute(delete(SignInAttempts).where(key.in_(held_elsewhere)))
            else:  # one writer at a time: nothing to wait for
                await session.execute(delete(SignInAttempts).where(stale))

    async def give_back_attempts(self, keys: dict[str, str]) -> None:
        """Uncount one attempt under each ``scope: key`` (an attempt that was refused or succeeded)."""
        async with self.db.transaction() as session:
            for scope, key in keys.items():
                await session.execute(
                    update(SignInAttempts)
                    .where(
                        SignInAttempts.scope == scope,
                        SignInAttempts.key == key[:128],
                        SignInAttempts.count > 0,
                    )
                    .values(count=SignInAttempts.count - 1)
                )

    async def forget_attempts(self, scope: str, key: str) -> None:
        """Start ``scope: key`` over (a username after a successful sign-in)."""
        async with self.db.transaction() as session:
            await session.execute(
                delete(SignInAttempts).where(SignInAttempts.scope == scope, SignInAttempts.key == key[:128])
            )

    # invitations

    async def create_invitation(
        self, team_id: str, role: Role, token_hash: str, created_by: str | None, expires_at: datetime
    ) -> InvitationRecord:
        async with self.db.transaction() as session:
            row = Invitation(
                team_id=team_id,
                role=role,
                token_hash=token_hash,
                created_by=created_by,
                expires_at=expires_at,
            )
            session.add(row)
            await session.flush()
            return _invitation_record(row)

    async def invitation_by_token_hash(self, token_hash: str) -> InvitationRecord | None:
        async with self.db.sessions() as session:
            row = await session.scalar(select(Invitation).where(Invitation.token_hash == token_hash))
            return None if row is None else _invitation_record(row)

    async def list_invitations(self, team_id: str) -> list[InvitationRecord]:
        async with self.db.sessions() as session:
            rows = await session.scalars(
                select(Invitation).where(Invitation.team_id == team_id).order_by(Invitation.created_at.desc())
            )
            return [_invitation_record(row) for row in rows]

    async def delete_invitation(self, team_id: str, invitation_id: str) -> None:
        async with self.db.transaction() as session:
            result = await session.execute(
                delete(Invitation).where(Invitation.team_id == team_id, Invitation.id == invitation_id)
            )
            if not getattr(result, "rowcount", 0):
                raise NotFound(f"invitation {invitation_id} not found")

    async def accept_invitation(
        self, token_hash: str, username: str, password_hash: str, now: datetime
    ) -> UserRecord | None:
        """Use the invitation once: mark it used and create its member and user, all or nothing.

        None when the token is unknown, used or expired (the conditional update claims it, so two
        people racing for one link cannot both join)."""
        try:
            async with self.db.transaction() as session:
                claimed = await session.execute(
                    update(Invitation)
                    .where(
                        Invitation.token_hash == token_hash,
                        Invitation.used_at.is_(None),
                        Invitation.expires_at > now,
                    )
                    .values(used_at=now)
                )
                if not getattr(claimed, "rowcount", 0):
                    return None
                invitation = await session.scalar(
                    select(Invitation).where(Invitation.token_hash == token_hash)
                )
                assert invitation is not None
                role: Role = invitation.role  # type: ignore[assignment]
                user = await self._add_member_user(session, invitation.team_id, username, role, password_hash)
                invitation.used_by = user.id
                return user
        except IntegrityError:
            raise _taken(username) from None
