"""Alembic environment: runs on a connection handed in by fathom.store.migrate (never reads a config file)."""

from __future__ import annotations

from alembic import context

from fathom.store.models import Base

connection = context.config.attributes.get("connection")
if connection is None:  # pragma: no cover - offline SQL generation is not supported
    raise RuntimeError("run migrations through `fathom db upgrade` (fathom.store.migrate)")

context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    render_as_batch=connection.dialect.name == "sqlite",
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
