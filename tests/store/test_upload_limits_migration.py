"""Migration 0015 on SQLite and PostgreSQL: a chat file stored before it learns its app and chat from its
key (``chat/app/{appId}/{uid}/{chatId}/{fileId}-{name}``), so deleting the chat deletes it too; a
knowledge-base file keeps none."""

from __future__ import annotations

import itertools
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import text

from fathom.store import migrate
from fathom.store.db import Database
from fathom.store.files import LocalFileStore
from fathom.store.pg_embedded import EmbeddedPostgres

_names = itertools.count()
TEAM, APP = "t" * 24, "a" * 24
DIGEST = "ab" * 32


async def _database_at_0012(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Database:
    if backend == "sqlite":
        db = Database(f"sqlite:///{tmp_path / 'old.db'}")
    else:
        server: EmbeddedPostgres = request.getfixturevalue("postgres_server")
        db = Database(server.create_database(f"uploads_{os.getpid()}_{next(_names)}"))
    await migrate.upgrade(db, "0012")
    return db


async def test_chat_files_stored_before_0015_go_with_their_chat(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    db = await _database_at_0012(backend, tmp_path, request)
    now = datetime.now(UTC)
    rows = {
        "f" * 24: ("chat", f"chat/app/{APP}/u1/c1/{'f' * 24}-notes.txt"),
        "e" * 24: ("chat", f"chat/app/{APP}/u1/c2/{'e' * 24}-other.txt"),
        "d" * 24: ("dataset", "report.pdf"),
    }
    try:
        async with db.transaction() as session:  # what version 0012's code wrote
            await session.execute(
                text("INSERT INTO teams (id, name, created_at) VALUES (:id, 'team', :at)"),
                {"id": TEAM, "at": now},
            )
            for file_id, (bucket, name) in rows.items():
                await session.execute(
                    text(
                        "INSERT INTO stored_files (id, team_id, bucket, name, content_type, size, sha256,"
                        " storage_key, created_at) VALUES (:id, :team, :bucket, :name, 'text/plain', 5,"
                        " :digest, :key, :at)"
                    ),
                    {
                        "id": file_id,
                        "team": TEAM,
                        "bucket": bucket,
                        "name": name,
                        "digest": DIGEST,
                        "key": f"{DIGEST[:2]}/{DIGEST}",
                        "at": now,
                    },
                )
        assert await migrate.upgrade(db) == migrate.head_revision()
        async with db.sessions() as session:
            found = (await session.execute(text("SELECT id, app_id, chat_id FROM stored_files"))).all()
        assert sorted(found) == [("d" * 24, None, None), ("e" * 24, APP, "c2"), ("f" * 24, APP, "c1")]
        files = LocalFileStore(db, tmp_path / "files")
        assert await files.delete_files(TEAM, bucket="chat", app_id=APP, chat_ids=["c1"]) == 1
        assert await files.team_usage(TEAM) == 10
    finally:
        await db.close()
