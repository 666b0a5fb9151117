"""Schema migrations with Alembic, run on server start and by ``fathom db upgrade``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from fathom.store.db import Database

MIGRATIONS_DIR = Path(__file__).parent / "migrations"


def _config(connection: Any = None) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def head_revision() -> str | None:
    """The newest migration shipped with this version of Fathom."""
    return ScriptDirectory.from_config(_config()).get_current_head()


async def current_revision(db: Database) -> str | None:
    """The migration the database is at (None for an empty database)."""

    def read(sync_conn: Any) -> str | None:
        return MigrationContext.configure(sync_conn).get_current_revision()

    async with db.engine.connect() as conn:
        return await conn.run_sync(read)


async def upgrade(db: Database, target: str = "head") -> str | None:
    """Bring the schema to the newest migration (or ``target``); returns the revision reached. Idempotent."""

    def run(sync_conn: Any) -> None:
        command.upgrade(_config(sync_conn), target)

    async with db.engine.begin() as conn:
        await conn.run_sync(run)
    return await current_revision(db)


async def is_current(db: Database) -> bool:
    return await current_revision(db) == head_revision()
