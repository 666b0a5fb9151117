"""Who created an app (the ``apps.member_id`` column the generic app repository does not expose)."""

from __future__ import annotations

from sqlalchemy import bindparam, select, update

from fathom.store.db import Database
from fathom.store.models import App

_OWNER = select(App.member_id).where(App.id == bindparam("app_id"))


class SqlAppOwnerRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def set_owner(self, app_id: str, member_id: str) -> None:
        async with self.db.transaction() as session:
            await session.execute(update(App).where(App.id == app_id).values(member_id=member_id))

    async def owner_of(self, app_id: str) -> str | None:
        owner: str | None = await self.db.run_read(
            lambda conn: conn.execute(_OWNER, {"app_id": app_id}).scalar()
        )
        return owner
