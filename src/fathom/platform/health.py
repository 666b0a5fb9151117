"""The database's health as ``GET /api/health`` reports it: reachable, and its migrations current."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from fathom.store import migrate
from fathom.store.db import Database
from fathom.store.errors import DATABASE_UNAVAILABLE, database_unavailable

log = logging.getLogger("fathom.server")


@dataclass(frozen=True)
class DatabaseHealth:
    """``error``: the kind of failure, never the driver's text (it names the host and port); the
    revisions are None when the database could not be read."""

    dialect: str
    ok: bool
    error: str | None = None
    current: str | None = None
    head: str | None = None

    @property
    def up_to_date(self) -> bool:
        return self.ok and self.current == self.head


async def database_health(db: Database) -> DatabaseHealth:
    """Ping the database and read its migration revision."""
    try:
        await db.ping()
        current = await migrate.current_revision(db)
        return DatabaseHealth(db.dialect, True, current=current, head=migrate.head_revision())
    except Exception as exc:  # unauthenticated callers: the kind of failure only
        log.warning("health: the database check failed: %s", exc)
        error = DATABASE_UNAVAILABLE if database_unavailable(exc) else type(exc).__name__
        return DatabaseHealth(db.dialect, False, error=error)
