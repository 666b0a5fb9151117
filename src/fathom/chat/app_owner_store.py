"""Who created an app (the ``apps.member_id`` column the generic repository does not expose)."""

from __future__ import annotations

from sqlalchemy import select, update

from fathom.store.db import Database
from fathom.store.models import App


class AppOwnerStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def set_owner(self, app_id: str, member_id: str) -> None:
        async with self.db.transaction() as session:
            await session.execute(update(App).where(App.id == app_id).values(member_id=member_id))

    async def owner_of(self, app_id: str) -> str | None:
        async with self.db.sessions() as session:
            owner: str | None = await session.scalar(select(App.member_id).where(App.id == app_id))
            return owner
