"""Migrations build the schema the models describe, on both backends; re-running them is harmless."""

from __future__ import annotations

from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from fathom.store import migrate
from fathom.store.db import Database
from fathom.store.models import Base


async def test_migrated_schema_matches_the_models(database: Database) -> None:
    def diff(sync_conn: Any) -> list[Any]:
        def ours(obj: Any, name: str | None, kind: str, reflected: bool, compare_to: Any) -> bool:
            # search structures live outside the models (FTS5 shadow tables, tsvector, pgvector column)
            return not ((name or "").startswith("data_fts") or (kind == "column" and name == "embedding"))

        context = MigrationContext.configure(sync_conn, opts={"compare_type": False, "include_object": ours})
        return list(compare_metadata(context, Base.metadata))

    async with database.engine.connect() as conn:
        differences = await conn.run_sync(diff)
    assert differences == []


async def test_upgrade_is_idempotent_and_reports_head(database: Database) -> None:
    assert await migrate.is_current(database)
    assert await migrate.upgrade(database) == migrate.head_revision()
    assert await migrate.current_revision(database) == migrate.head_revision()


async def test_empty_database_is_not_current(tmp_path: Any) -> None:
    db = Database(f"sqlite:///{tmp_path / 'empty.db'}")
    try:
        assert await migrate.current_revision(db) is None
        assert not await migrate.is_current(db)
    finally:
        await db.close()
