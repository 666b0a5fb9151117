"""What Fathom needs of a PostgreSQL server, checked before migrating: a version it supports and the
pgvector extension (created in the database, or creatable by the connecting role).

Each unmet need is one ``ConfigError`` line that names the fix, so ``fathom serve``, ``fathom worker``,
``fathom db upgrade`` and ``fathom doctor`` say it instead of a driver traceback. The check only reads
catalogs; the migration creates the extension when the role may.
"""

from __future__ import annotations

from sqlalchemy import text

from fathom.config import ConfigError
from fathom.store.db import Database

__all__ = ["MIN_PGVECTOR", "MIN_SERVER_VERSION", "check_postgres_requirements"]

MIN_SERVER_VERSION = 130000  # PostgreSQL 13: the oldest release pgvector 0.8 builds for
MIN_PGVECTOR = (0, 5, 0)  # HNSW indexes arrived in pgvector 0.5.0

_FACTS = text(
    "SELECT current_setting('server_version_num')::int, current_database(), current_user, "
    "(SELECT extversion FROM pg_extension WHERE extname = 'vector'), "
    "(SELECT default_version FROM pg_available_extensions WHERE name = 'vector'), "
    "(SELECT bool_or(superuser) FROM pg_available_extension_versions WHERE name = 'vector'), "
    "(SELECT rolsuper FROM pg_roles WHERE rolname = current_user), "
    "has_database_privilege(current_database(), 'CREATE')"
)


def _version(value: str) -> tuple[int, ...]:
    parts: list[int] = []
    for piece in value.split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


async def check_postgres_requirements(db: Database) -> None:
    """Raise ``ConfigError`` (one line naming the fix) when the server cannot hold Fathom's schema."""
    if not db.is_postgres:
        return
    async with db.engine.connect() as conn:
        row = (await conn.execute(_FACTS)).one()
    server_num, database, role, created, available, needs_superuser, is_superuser, may_create = row
    where = f"FATHOM_DATABASE_URL={db.describe()}"
    major = server_num // 10000
    if server_num < MIN_SERVER_VERSION:
        raise ConfigError(
            f"{where}: PostgreSQL {major} is too old; Fathom needs PostgreSQL 13 or newer with pgvector 0.5+."
        )
    if created is not None:
        if _version(created) < MIN_PGVECTOR:
            raise ConfigError(
                f"{where}: pgvector {created} has no HNSW indexes; install pgvector 0.5 or newer on the "
                f"server, then run `ALTER EXTENSION vector UPDATE` in database {database}."
            )
        return
    if available is None:
        raise ConfigError(
            f"{where}: the PostgreSQL server has no pgvector extension, which Fathom needs for vectors; "
            f"install pgvector on the database server (e.g. the PGDG package postgresql-{major}-pgvector), "
            f"then run `CREATE EXTENSION vector` as a superuser in database {database}."
        )
    if _version(str(available)) < MIN_PGVECTOR:
        raise ConfigError(
            f"{where}: the server's pgvector is {available}, without HNSW indexes; install pgvector 0.5 or "
            f"newer (e.g. the PGDG package postgresql-{major}-pgvector)."
        )
    if (needs_superuser and not is_superuser) or not (is_superuser or may_create):
        raise ConfigError(
            f"{where}: pgvector is installed but not created in database {database}, and role {role} may "
            f"not create it; run `CREATE EXTENSION vector` as a superuser in that database "
            f"(psql -d {database} -c 'CREATE EXTENSION vector'), then start Fathom again."
        )
