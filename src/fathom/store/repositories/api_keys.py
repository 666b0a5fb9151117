"""API keys: generated once, stored as SHA-256 hashes, optionally limited to one app."""

from __future__ import annotations

import hashlib
import secrets
import string

from sqlalchemy import select, update

from fathom.store.db import Database
from fathom.store.models import ApiKey, Member, utcnow
from fathom.store.protocols import ApiKeyRecord, NotFound

KEY_PREFIX = "fathom-"
_ALPHABET = string.ascii_letters + string.digits


def generate_api_key() -> str:
    """``fathom-`` and 40 alphanumeric characters (no ``-``, so FastGPT's ``key-appId`` form still parses)."""
    return KEY_PREFIX + "".join(secrets.choice(_ALPHABET) for _ in range(40))


def hash_api_key(plain_key: str) -> str:
    return hashlib.sha256(plain_key.strip().encode()).hexdigest()


def key_record(row: ApiKey) -> ApiKeyRecord:
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


class SqlApiKeyRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def create_key(
        self, team_id: str, member_id: str, *, name: str = "", app_id: str | None = None
    ) -> tuple[ApiKeyRecord, str]:
        """Create a key; returns the record and the plain key, which is never stored."""
        plain = generate_api_key()
        async with self.db.transaction() as session:
            member = await session.get(Member, member_id)
            if member is None or member.team_id != team_id:
                raise NotFound(f"member {member_id} not found in team {team_id}")
            row = ApiKey(
                team_id=team_id,
                member_id=member_id,
                app_id=app_id,
                name=name,
                key_hash=hash_api_key(plain),
                prefix=plain[:12],
            )
            session.add(row)
            await session.flush()
            return key_record(row), plain

    async def find_by_plain_key(self, plain_key: str) -> ApiKeyRecord | None:
        """The live (not revoked) key with this value, or None."""
        async with self.db.sessions() as session:
            row = await session.scalar(select(ApiKey).where(ApiKey.key_hash == hash_api_key(plain_key)))
            if row is None or row.revoked_at is not None:
                return None
            return key_record(row)

    async def list_keys(self, team_id: str, app_id: str | None = None) -> list[ApiKeyRecord]:
        query = select(ApiKey).where(ApiKey.team_id == team_id, ApiKey.revoked_at.is_(None))
        if app_id is not None:
            query = query.where(ApiKey.app_id == app_id)
        async with self.db.sessions() as session:
            return [key_record(row) for row in await session.scalars(query.order_by(ApiKey.created_at))]

    async def revoke_key(self, team_id: str, key_id: str) -> None:
        async with self.db.transaction() as session:
            result = await session.execute(
                update(ApiKey)
                .where(ApiKey.id == key_id, ApiKey.team_id == team_id, ApiKey.revoked_at.is_(None))
                .values(revoked_at=utcnow())
            )
            if result.rowcount == 0:  # type: ignore[attr-defined]
                raise NotFound(f"api key {key_id} not found")

    async def record_use(self, key_id: str, points: float = 0.0) -> None:
        async with self.db.transaction() as session:
            await session.execute(
                update(ApiKey)
                .where(ApiKey.id == key_id)
                .values(last_used_at=utcnow(), usage_points=ApiKey.usage_points + points)
            )
