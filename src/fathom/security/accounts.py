"""Accounts: passwords (argon2id), console sessions, invitations and the sign-in rate limit.

- A user is one member of a team (its role is the member's: owner, admin or member) with a password.
  Only an argon2id hash is kept; hashing runs in a worker thread so it never stalls the event loop.
- A session is a random token (the cookie) stored as its SHA-256 hash, with its own CSRF token and an
  expiry. Signing out deletes the row; changing the password deletes every other session of the user.
- Sign-in attempts are counted per username and per client IP in the database (so the limit holds across
  replicas), *before* the password is checked, by one statement that increments the counter and answers
  its new value: of N concurrent guesses at most the limit get a password check, whatever the timing.
  An attempt past the limit is refused (429, right password or wrong) and uncounted, until the window
  that began with the first counted attempt ends. A successful sign-in starts its username's count over
  and does not count against its address.
- An invitation is a one-use link for a role that expires; accepting it creates the member and the user.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal, Protocol

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from fathom.store.protocols import (
    ROLES,
    AttemptCount,
    Conflict,
    InvitationRecord,
    Role,
    SessionRecord,
    UserRecord,
)

ROOT_USERNAME = "root"
PASSWORD_MIN = 8
PASSWORD_MAX = 1024
INVITATION_HOURS_DEFAULT = 72.0
INVITATION_HOURS_MAX = 24.0 * 30
#: the stored hash of a disabled user: not an argon2 hash, so no password verifies against it
DISABLED_HASH = "!disabled"
_USERNAME = re.compile(r"^[a-z0-9][a-z0-9_.@-]{2,63}$")

ErrorKind = Literal["invalid", "credentials", "rate_limited", "gone", "taken", "forbidden"]


class AccountError(Exception):
    """A refused account operation; ``kind`` decides the HTTP answer, ``field`` names bad input."""

    def __init__(
        self, kind: ErrorKind, message: str, *, field: str | None = None, retry_after: int | None = None
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.field = field
        self.retry_after = retry_after


class AccountStore(Protocol):
    async def create_user(self, member_id: str, username: str, password_hash: str) -> UserRecord: ...
    async def create_member_user(
        self, team_id: str, username: str, role: Role, password_hash: str
    ) -> UserRecord: ...
    async def user_by_username(self, username: str) -> UserRecord | None: ...
    async def user_by_member(self, member_id: str) -> UserRecord | None: ...
    async def list_users(self, team_id: str) -> list[UserRecord]: ...
    async def set_password(
        self, user_id: str, password_hash: str, *, keep_session_id: str | None
    ) -> None: ...
    async def create_session(
        self, user_id: str, token_hash: str, csrf_token: str, client_ip: str, expires_at: datetime
    ) -> SessionRecord: ...
    async def session_by_token_hash(
        self, token_hash: str, now: datetime
    ) -> tuple[SessionRecord, UserRecord] | None: ...
    async def delete_session(self, session_id: str) -> None: ...
    async def count_attempts(
        self, keys: dict[str, str], now: datetime, window_start: datetime
    ) -> dict[str, AttemptCount]: ...
    async def give_back_attempts(self, keys: dict[str, str]) -> None: ...
    async def forget_attempts(self, scope: str, key: str) -> None: ...
    async def create_invitation(
        self, team_id: str, role: Role, token_hash: str, created_by: str | None, expires_at: datetime
    ) -> InvitationRecord: ...
    async def invitation_by_token_hash(self, token_hash: str) -> InvitationRecord | None: ...
    async def list_invitations(self, team_id: str) -> list[InvitationRecord]: ...
    async def delete_invitation(self, team_id: str, invitation_id: str) -> None: ...
    async def accept_invitation(
        self, token_hash: str, username: str, password_hash: str, now: datetime
    ) -> UserRecord | None: ...


@dataclass(frozen=True)
class SignInLimits:
    """At most ``per_user`` attempts for one username and ``per_ip`` for one client IP get a password
    check per window (a successful one is not counted)."""

    per_user: int = 5
    per_ip: int = 20
    window_seconds: float = 900.0


@dataclass(frozen=True)
class SignedIn:
    """A new session: ``token`` goes into the cookie, ``session.csrf_token`` into the console's header."""

    user: UserRecord
    session: SessionRecord
    token: str


def _hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _normalize_username(value: object) -> str:
    """A valid username (lowercased), else AccountError naming the field."""
    name = str(value or "").strip().lower()
    if not _USERNAME.fullmatch(name):
        raise AccountError(
            "invalid",
            "3 to 64 characters: letters, digits and . _ @ - (starting with a letter or digit)",
            field="username",
        )
    return name


def _check_password(value: object, field: str = "password") -> str:
    if not isinstance(value, str) or len(value) < PASSWORD_MIN:
        raise AccountError("invalid", f"at least {PASSWORD_MIN} characters", field=field)
    if len(value) > PASSWORD_MAX:
        raise AccountError("invalid", f"at most {PASSWORD_MAX} characters", field=field)
    return value


def _utcnow() -> datetime:
    return datetime.now(UTC)


def password_hasher(memory_kib: int = 65536, passes: int = 3) -> PasswordHasher:
    """argon2id with this memory (KiB) and passes, 4 lanes (``FATHOM_PASSWORD_HASH_MEMORY_KIB`` /
    ``_PASSES``; the defaults are argon2-cffi's, RFC 9106's second recommendation)."""
    return PasswordHasher(time_cost=passes, memory_cost=memory_kib, parallelism=4)


class AccountService:
    def __init__(
        self,
        store: AccountStore,
        *,
        session_ttl: timedelta = timedelta(days=7),
        limits: SignInLimits | None = None,
        clock: Callable[[], datetime] = _utcnow,
        hasher: PasswordHasher | None = None,
    ) -> None:
        self.store = store
        self.session_ttl = session_ttl
        self.limits = limits or SignInLimits()
        self.clock = clock
        self.hasher = hasher or password_hasher()
        self._dummy_hash: str | None = None

    # passwords

    async def hash_password(self, password: str) -> str:
        return await asyncio.to_thread(self.hasher.hash, password)

    async def _verify(self, password_hash: str, password: str) -> bool:
        if password_hash == DISABLED_HASH:  # no match, after the same work as a real hash (no timing tell)
            if self._dummy_hash is None:
                self._dummy_hash = await self.hash_password(secrets.token_hex(8))
            await self._verify(self._dummy_hash, password)
            return False

        def verify() -> bool:
            try:
                return self.hasher.verify(password_hash, password)
            except (VerificationError, InvalidHashError):
                return False

        return await asyncio.to_thread(verify)

    async def ensure_root_user(self, member_id: str, password: str | None) -> str | None:
        """Give the root member the user ``root`` if it has none yet: with ``password``, else a new random
        one, which is returned (to be shown once). None when the user existed or was just configured."""
        if await self.store.user_by_member(member_id) is not None:
            return None
        plain = password if password is not None else secrets.token_urlsafe(12)
        _check_password(plain, "FATHOM_ROOT_PASSWORD")
        try:
            await self.store.create_user(member_id, ROOT_USERNAME, await self.hash_password(plain))
        except Conflict:  # another replica made it first
            return None
        return None if password is not None else plain

    # sign-in, sessions

    async def _admit(self, name: str, client_ip: str) -> dict[str, str]:
        """Count this attempt under the username and the address, or refuse it (uncounted) when either
        count is past its limit. Answers the counters it holds."""
        now = self.clock()
        window = timedelta(seconds=self.limits.window_seconds)
        keys = {"user": name, "ip": client_ip}
        counts = await self.store.count_attempts(keys, now, now - window)
        for scope, limit in (("user", self.limits.per_user), ("ip", self.limits.per_ip)):
            counted = counts[scope]
            if counted.count > limit:
                await self.store.give_back_attempts(keys)
                # a parallel attempt may have started the window a moment after this one read the clock:
                # the wait is never longer than the window itself
                left = math.ceil((counted.window_started_at + window - now).total_seconds())
                wait = max(1, min(math.ceil(self.limits.window_seconds), left))
                who = "this username" if scope == "user" else "this address"
                raise AccountError(
                    "rate_limited",
                    f"too many failed sign-ins for {who}; try again in {wait} s",
                    retry_after=wait,
                )
        return keys

    async def sign_in(self, username: object, password: object, client_ip: str) -> SignedIn:
        name = str(username or "").strip().lower()
        if not name:
            raise AccountError("invalid", "required", field="username")
        if not isinstance(password, str) or not password:
            raise AccountError("invalid", "required", field="password")
        counted = await self._admit(name, client_ip)
        user = await self.store.user_by_username(name)
        if user is None:
            if self._dummy_hash is None:
                self._dummy_hash = await self.hash_password(secrets.token_hex(8))
            await self._verify(self._dummy_hash, password)  # the same work as a known name
            valid = False
        else:
            valid = await self._verify(user.password_hash, password)
        if user is None or not valid:
            raise AccountError("credentials", "wrong username or password")  # the attempt stays counted
        await self.store.forget_attempts("user", name)
        await self.store.give_back_attempts({"ip": counted["ip"]})
        if self.hasher.check_needs_rehash(user.password_hash):
            await self.store.set_password(user.id, await self.hash_password(password), keep_session_id=None)
        return await self._open_session(user, client_ip)

    async def _open_session(self, user: UserRecord, client_ip: str) -> SignedIn:
        token = secrets.token_urlsafe(32)
        session = await self.store.create_session(
            user.id, _hash_token(token), secrets.token_urlsafe(24), client_ip, self.clock() + self.session_ttl
        )
        return SignedIn(user, session, token)

    async def resolve_session(self, token: str) -> tuple[SessionRecord, UserRecord] | None:
        if not token:
            return None
        return await self.store.session_by_token_hash(_hash_token(token), self.clock())

    async def sign_out(self, session_id: str) -> None:
        await self.store.delete_session(session_id)

    async def change_password(
        self, user: UserRecord, current_session_id: str | None, old: object, new: object
    ) -> None:
        """Check the old password, store the new one and end every other session of the user."""
        if not isinstance(old, str) or not await self._verify(user.password_hash, old):
            raise AccountError("credentials", "the current password is wrong", field="oldPsw")
        plain = _check_password(new, "newPsw")
        await self.store.set_password(
            user.id, await self.hash_password(plain), keep_session_id=current_session_id
        )

    # users, invitations

    async def create_user(
        self, team_id: str, creator_role: Role, username: object, password: object, role: object
    ) -> UserRecord:
        name = _normalize_username(username)
        plain = _check_password(password)
        chosen = _check_role(role, creator_role)
        try:
            return await self.store.create_member_user(team_id, name, chosen, await self.hash_password(plain))
        except Conflict:
            raise AccountError("taken", f"{name!r} is taken; choose another", field="username") from None

    async def list_users(self, team_id: str) -> list[UserRecord]:
        return await self.store.list_users(team_id)

    # the operator's commands (``fathom users``): no caller role, the machine's owner runs them

    async def user_named(self, username: object) -> UserRecord:
        """The user called ``username``, else AccountError ``gone`` naming it."""
        name = str(username or "").strip().lower()
        user = await self.store.user_by_username(name)
        if user is None:
            raise AccountError("gone", f"no user is called {name!r}", field="username")
        return user

    async def reset_password(self, username: object, password: str | None = None) -> str:
        """Give the user ``password`` (else a new random one, returned to be shown once), end all of
        their sessions and lift a sign-in lock-out on the name. Also re-enables a disabled user."""
        user = await self.user_named(username)
        plain = _check_password(password) if password is not None else secrets.token_urlsafe(12)
        await self.store.set_password(user.id, await self.hash_password(plain), keep_session_id=None)
        await self.store.forget_attempts("user", user.username)
        return plain

    async def disable_user(self, username: object) -> UserRecord:
        """Stop the user signing in: no password matches any more and every session ends.
        ``reset_password`` enables them again."""
        user = await self.user_named(username)
        await self.store.set_password(user.id, DISABLED_HASH, keep_session_id=None)
        return user

    async def create_invitation(
        self, team_id: str, creator_member_id: str, creator_role: Role, role: object, hours: object
    ) -> tuple[InvitationRecord, str]:
        chosen = _check_role(role, creator_role)
        lifetime = INVITATION_HOURS_DEFAULT if hours in (None, "") else hours
        if (
            isinstance(lifetime, bool)
            or not isinstance(lifetime, int | float)
            or not 0 < lifetime <= INVITATION_HOURS_MAX
        ):
            raise AccountError(
                "invalid",
                f"a number of hours above 0 and at most {INVITATION_HOURS_MAX:g}",
                field="expiresHours",
            )
        token = secrets.token_urlsafe(24)
        expires = self.clock() + timedelta(hours=float(lifetime))
        record = await self.store.create_invitation(
            team_id, chosen, _hash_token(token), creator_member_id, expires
        )
        return record, token

    async def list_invitations(self, team_id: str) -> list[InvitationRecord]:
        return await self.store.list_invitations(team_id)

    async def delete_invitation(self, team_id: str, invitation_id: str) -> None:
        await self.store.delete_invitation(team_id, invitation_id)

    async def invitation(self, token: object) -> InvitationRecord:
        """The invitation a link's token names, if it can still be used; else AccountError ``gone``."""
        record = await self.store.invitation_by_token_hash(_hash_token(str(token or "")))
        if record is None:
            raise AccountError("gone", "this invitation link is unknown or was revoked", field="token")
        if record.used_at is not None:
            raise AccountError("gone", "this invitation link was already used", field="token")
        if record.expires_at <= self.clock():
            raise AccountError("gone", "this invitation link has expired; ask for a new one", field="token")
        return record

    async def accept_invitation(
        self, token: object, username: object, password: object, client_ip: str
    ) -> SignedIn:
        await self.invitation(token)
        name = _normalize_username(username)
        plain = _check_password(password)
        password_hash = await self.hash_password(plain)
        try:
            user = await self.store.accept_invitation(
                _hash_token(str(token)), name, password_hash, self.clock()
            )
        except Conflict:
            raise AccountError("taken", f"{name!r} is taken; choose another", field="username") from None
        if user is None:  # used or expired between the check and the claim
            raise AccountError("gone", "this invitation link was already used", field="token")
        return await self._open_session(user, client_ip)


def is_disabled(user: UserRecord) -> bool:
    """Whether ``fathom users disable`` stopped this user signing in."""
    return user.password_hash == DISABLED_HASH


def _check_role(value: object, creator_role: Role) -> Role:
    """A role the creator may hand out: owners any, admins admin or member, members none."""
    role = str(value or "member")
    if role not in ROLES:
        raise AccountError("invalid", f"one of {', '.join(ROLES)}", field="role")
    if creator_role == "member":
        raise AccountError("forbidden", "only owners and admins may add people")
    if role == "owner" and creator_role != "owner":
        raise AccountError("forbidden", "only an owner may make another owner")
    return role
