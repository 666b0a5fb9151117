"""API keys: generated once, stored as SHA-256 hashes, optionally limited to one app.

The chat hot path asks two things of this repository on every request, so both are cheap:

- **Who is calling** (:meth:`SqlApiKeyRepository.find_identity`): the key and its member's role, read in
  one statement and kept in memory for :data:`KEY_CACHE_SECONDS`. Revoking a key through this
  repository drops it from the cache at once, so its very next request fails; a key revoked by another
  process (a second replica, the CLI) stops working here within :data:`KEY_CACHE_SECONDS`. A member's
  role change or removal drops the member's keys the same way (:meth:`SqlApiKeyRepository.forget_member`).
- **Usage counters** (:meth:`SqlApiKeyRepository.record_use`): points and the ``last used`` stamp are
  added up in memory and written behind, every key in one statement batch, at most
  :data:`USE_FLUSH_SECONDS` after the first unwritten use, before any read of the keys, and on
  :meth:`SqlApiKeyRepository.aclose` (the platform's shutdown). A crash loses at most the last second of
  counters, never a chat turn or a usage record (those are written with the turn).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import secrets
import string
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Connection, Table, bindparam, select, update

from fathom.store.db import Database
from fathom.store.errors import database_unavailable
from fathom.store.models import ApiKey, Member, utcnow
from fathom.store.protocols import ApiKeyRecord, NotFound, Role

log = logging.getLogger("fathom.store")

KEY_CACHE_SECONDS = 5.0
KEY_CACHE_SIZE = 10_000
USE_FLUSH_SECONDS = 1.0

KEY_PREFIX = "fathom-"
_ALPHABET = string.ascii_letters + string.digits


def _generate_api_key() -> str:
    """``fathom-`` and 40 alphanumeric characters (no ``-``, so FastGPT's ``key-appId`` form still parses)."""
    return KEY_PREFIX + "".join(secrets.choice(_ALPHABET) for _ in range(40))


def _hash_api_key(plain_key: str) -> str:
    return hashlib.sha256(plain_key.strip().encode()).hexdigest()


def _key_record(row: Any) -> ApiKeyRecord:
    return ApiKeyRecord(
        id=row.id,
        team_id=row.team_id,
        member_id=row.member_id,
        app_id=row.app_id,
        name=row.name,
        prefix=row.prefix,
        usage_points=row.usage_points,
        last_used_at=row.last_used_at,
        revoked_at=row.revoked_at,
        created_at=row.created_at,
    )


_KEYS = cast(Table, ApiKey.__table__)
_MEMBERS = cast(Table, Member.__table__)
_IDENTITY = (
    select(*_KEYS.c, _MEMBERS.c.role.label("member_role"))
    .select_from(_KEYS.outerjoin(_MEMBERS, _MEMBERS.c.id == _KEYS.c.member_id))
    .where(_KEYS.c.key_hash == bindparam("key_hash"))
)
_ADD_USE = (
    update(_KEYS)
    .where(_KEYS.c.id == bindparam("key_id"))
    .values(usage_points=_KEYS.c.usage_points + bindparam("points"), last_used_at=bindparam("used_at"))
)

Identity = tuple[ApiKeyRecord, Role | None]  # the key, and its member's role (None: member gone)


class SqlApiKeyRepository:
    def __init__(self, db: Database) -> None:
        self.db = db
        self._identities: dict[str, tuple[float, Identity]] = {}
        self._uses: dict[str, tuple[float, datetime]] = {}
        self._flusher: asyncio.Task[None] | None = None
        self._outage_logged = False

    async def find_identity(self, plain_key: str) -> Identity | None:
        """The live key with this value and its member's role (None when the member is gone), from
        the cache when it was read in the last :data:`KEY_CACHE_SECONDS`; None for an unknown or revoked
        key."""
        key_hash = _hash_api_key(plain_key)
        now = time.monotonic()
        cached = self._identities.get(key_hash)
        if cached is not None and now - cached[0] < KEY_CACHE_SECONDS:
            return cached[1]

        def read(conn: Connection) -> Identity | None:
            row = conn.execute(_IDENTITY, {"key_hash": key_hash}).first()
            if row is None or row.revoked_at is not None:
                return None
            return _key_record(row), row.member_role

        found = await self.db.run_read(read)
        if found is None:
            self._identities.pop(key_hash, None)
            return None
        if len(self._identities) >= KEY_CACHE_SIZE:
            self._identities.clear()
        self._identities[key_hash] = (now, found)
        return found

    def _forget_where(self, matches: Callable[[ApiKeyRecord], bool]) -> None:
        for key_hash, (_, (record, _role)) in list(self._identities.items()):
            if matches(record):
                del self._identities[key_hash]

    def _forget(self, key_id: str) -> None:
        self._forget_where(lambda record: record.id == key_id)

    def forget_member(self, member_id: str) -> None:
        """Drop the member's keys from the cache (their role changed or they left the team), so the
        next request reads the member again."""
        self._forget_where(lambda record: record.member_id == member_id)

    async def create_key(
        self, team_id: str, member_id: str, *, name: str = "", app_id: str | None = None
    ) -> tuple[ApiKeyRecord, str]:
        """Create a key; returns the record and the plain key, which is never stored."""
        plain = _generate_api_key()
        async with self.db.transaction() as session:
            member = await session.get(Member, member_id)
            if member is None or member.team_id != team_id:
                raise NotFound(f"member {member_id} not found in team {team_id}")
            row = ApiKey(
                team_id=team_id,
                member_id=member_id,
                app_id=app_id,
                name=name,
                key_hash=_hash_api_key(plain),
                prefix=plain[:12],
            )
            session.add(row)
            await session.flush()
            return _key_record(row), plain

    async def find_by_plain_key(self, plain_key: str) -> ApiKeyRecord | None:
        """The live (not revoked) key with this value, or None (read now, not from the cache)."""
        await self.flush()
        async with self.db.sessions() as session:
            row = await session.scalar(select(ApiKey).where(ApiKey.key_hash == _hash_api_key(plain_key)))
            if row is None or row.revoked_at is not None:
                return None
            return _key_record(row)

    async def list_keys(self, team_id: str, app_id: str | None = None) -> list[ApiKeyRecord]:
        query = select(ApiKey).where(ApiKey.team_id == team_id, ApiKey.revoked_at.is_(None))
        if app_id is not None:
            query = query.where(ApiKey.app_id == app_id)
        await self.flush()
        async with self.db.sessions() as session:
            return [_key_record(row) for row in await session.scalars(query.order_by(ApiKey.created_at))]

    async def revoke_key(self, team_id: str, key_id: str) -> None:
        """Revoke the key; its next request through this repository fails (the cache forgets it)."""
        self._forget(key_id)
        async with self.db.transaction() as session:
            result = await session.execute(
                update(ApiKey)
                .where(ApiKey.id == key_id, ApiKey.team_id == team_id, ApiKey.revoked_at.is_(None))
                .values(revoked_at=utcnow())
            )
            if result.rowcount == 0:  # type: ignore[attr-defined]
                raise NotFound(f"api key {key_id} not found")
        self._forget(key_id)  # a request authenticated meanwhile must not keep it cached

    async def record_use(self, key_id: str, points: float = 0.0) -> None:
        """Add ``points`` to the key's usage and stamp it as used now (written behind, see the module)."""
        earlier = self._uses.get(key_id)
        self._uses[key_id] = ((earlier[0] if earlier else 0.0) + points, utcnow())
        loop = asyncio.get_running_loop()
        if self._flusher is None or self._flusher.done() or self._flusher.get_loop() is not loop:
            self._flusher = loop.create_task(self._flush_later())

    async def _flush_later(self) -> None:
        while self._uses:
            await asyncio.sleep(USE_FLUSH_SECONDS)
            try:
                await self.flush()
            except Exception as exc:  # the counters stay queued for the next round
                if not database_unavailable(exc):
                    log.exception("writing API key usage counters failed; retrying in a second")
                elif not self._outage_logged:  # an outage: one line, not a trace a second
                    self._outage_logged = True
                    log.warning("API key usage counters wait for the database (%s)", type(exc).__name__)
            else:
                self._outage_logged = False

    async def flush(self) -> None:
        """Write every queued use now, all keys in one statement batch."""
        if not self._uses:
            return
        uses, self._uses = self._uses, {}
        rows = [{"key_id": k, "points": p, "used_at": t} for k, (p, t) in uses.items()]
        try:
            await self.db.run_write(lambda conn: conn.execute(_ADD_USE, rows))
        except BaseException:
            for key_id, (points, used_at) in uses.items():  # put them back, newer uses kept
                later = self._uses.get(key_id)
                self._uses[key_id] = (points + (later[0] if later else 0.0), later[1] if later else used_at)
            raise

    async def aclose(self) -> None:
        """Stop the write-behind timer and write what is queued (the platform's shutdown)."""
        if self._flusher is not None and not self._flusher.done():
            self._flusher.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._flusher
        self._flusher = None
        await self.flush()
