"""Migration 0013 gives every chat made before it an owner (docs/security.md "Who may touch a chat"): a
share-link chat its visitor, an API chat an unknown key (only the app's managers reach it), every other
chat its member; on SQLite and PostgreSQL."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest
from sqlalchemy import text

from fathom.chat.ownership import ChatCaller
from fathom.store import migrate
from fathom.store.db import Database
from fathom.store.pg_embedded import EmbeddedPostgres
from fathom.store.repositories.chats import SqlChatRepository

_names = itertools.count()
TEAM, APP, MEMBER = "t" * 24, "a" * 24, "m" * 24
# chat id → (source, share_id, out_link_uid) as version 0012 stored them, all with member_id MEMBER
OLD_CHATS = {
    "console": ("online", None, None),
    "editor-test": ("test", None, None),
    "from-a-key": ("api", None, None),
    "from-a-visitor": ("share", "s" * 24, "visitor-7"),
}


async def _database_at_0012(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Database:
    if backend == "sqlite":
        db = Database(f"sqlite:///{tmp_path / 'old.db'}")
    else:
        server: EmbeddedPostgres = request.getfixturevalue("postgres_server")
        db = Database(server.create_database(f"owners_{os.getpid()}_{next(_names)}"))
    await migrate.upgrade(db, "0012")
    return db


async def test_chats_made_before_ownership_get_an_owner(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    db = await _database_at_0012(backend, tmp_path, request)
    try:
        async with db.transaction() as session:  # what version 0012's code wrote
            now = {"now": "2026-12-01 10:00:00"}
            await session.execute(
                text("INSERT INTO teams (id, name, created_at) VALUES (:t, 'T', :now)"), {"t": TEAM, **now}
            )
            await session.execute(
                text(
                    "INSERT INTO apps (id, team_id, member_id, name, type, intro, avatar, draft, created_at, "
                    "updated_at) VALUES (:a, :t, :m, 'Bot', 'simple', '', '', '{}', :now, :now)"
                ),
                {"a": APP, "t": TEAM, "m": MEMBER, **now},
            )
            for number, (chat_id, (source, share_id, uid)) in enumerate(OLD_CHATS.items()):
                await session.execute(
                    text(
                        "INSERT INTO chats (id, chat_id, team_id, app_id, member_id, title, custom_title, "
                        "top, source, share_id, out_link_uid, variables, metadata, created_at, updated_at) "
                        "VALUES "
                        "(:id, :c, :t, :a, :m, 'x', '', false, :s, :sh, :u, '{}', '{}', :now, :now)"
                    ),
                    {
                        "id": f"{number:024d}",
                        "c": chat_id,
                        "t": TEAM,
                        "a": APP,
                        "m": MEMBER,
                        "s": source,
                        "sh": share_id,
                        "u": uid,
                        **now,
                    },
                )
        assert await migrate.upgrade(db) == migrate.head_revision()
        chats = SqlChatRepository(db)
        found = {chat_id: await chats.get_chat(TEAM, APP, chat_id) for chat_id in OLD_CHATS}
        kinds = {chat_id: (chat.owner_kind, chat.api_key_id) for chat_id, chat in found.items() if chat}
        assert kinds == {
            "console": ("member", None),
            "editor-test": ("member", None),
            "from-a-key": ("key", None),
            "from-a-visitor": ("visitor", None),
        }
        member = ChatCaller.of_member_or_key(MEMBER, None, manages_app=False)
        some_key = ChatCaller.of_member_or_key(MEMBER, "k" * 24, manages_app=False)
        visitor = ChatCaller.of_visitor("s" * 24, "visitor-7")
        manager = ChatCaller.of_member_or_key("x" * 24, None, manages_app=True)
        readable = {
            name: sorted(c for c, chat in found.items() if caller.may(chat, "read"))
            for name, caller in {
                "member": member,
                "key": some_key,
                "visitor": visitor,
                "manager": manager,
            }.items()
        }
        assert readable == {
            "member": ["console", "editor-test"],  # not the API chat its key made: no key owns that now
            "key": [],
            "visitor": ["from-a-visitor"],
            "manager": sorted(OLD_CHATS),
        }
    finally:
        await db.close()
