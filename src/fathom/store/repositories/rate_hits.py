"""Requests counted in a sliding minute, in the database, so a limit holds across replicas.

Each request first commits its own hit, then counts the caller's hits of the window and, when they are
more than the limit, takes its hit back and is refused. A request that passes has therefore seen every
hit that passed before it, so no window ever admits more than ``limit`` of a caller's requests, however
the requests race (a race may refuse one too many, never admit one too many). Share links' QPM and the
per-caller upload limit both count this way.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, delete, func, select

from fathom.store.db import Database
from fathom.store.models import UploadHit, new_id, utcnow

WINDOW = timedelta(seconds=60)


async def admit_hit(
    db: Database,
    model: Any,
    mine: Sequence[ColumnElement[bool]],
    columns: dict[str, Any],
    limit: int,
    window: timedelta = WINDOW,
) -> bool:
    """Count one hit of ``model`` (a table with ``id`` and ``created_at``) for the caller ``mine``
    selects, made of ``columns``; False (and not counted) when it would be more than ``limit``."""
    now: datetime = utcnow()
    since = now - window
    hit_id = new_id()
    async with db.transaction() as session:  # committed before counting: see the module doc
        await session.execute(delete(model).where(*mine, model.created_at <= since))
        session.add(model(id=hit_id, created_at=now, **columns))
    async with db.transaction() as session:
        count = await session.scalar(
            select(func.count()).select_from(model).where(*mine, model.created_at > since)
        )
        if int(count or 0) <= limit:
            return True
        await session.execute(delete(model).where(model.id == hit_id))
        return False


class SqlUploadHits:
    """Each caller's uploads of the last minute (``caller``: ``member:<id>``, ``key:<id>``, ``visitor:…``)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def count_upload(self, caller: str, limit: int) -> bool:
        """Count one upload of ``caller``; False (and not counted) when it would be more than ``limit``
        in the last minute."""
        return await admit_hit(self.db, UploadHit, (UploadHit.caller == caller,), {"caller": caller}, limit)
