"""The chat hot path's PostgreSQL connections: a pooled connection the server closed is replaced before it is
used (without a ``SELECT 1`` at every check-out), single-statement reads and writes run in autocommit,
and nothing on the path ends in a ROLLBACK, so psycopg keeps the statements it prepared."""

from __future__ import annotations

import asyncio

import psycopg
import pytest
from sqlalchemy import text

from fathom.store.db import Database
from fathom.store.pg_reads import libpq_conninfo
from fathom.store.protocols import ChatItemRecord, ChatTurn
from fathom.store.repositories import SqlAppRepository, SqlTeamRepository
from fathom.store.repositories.chat_turns import SqlChatTurnRepository

pytestmark = pytest.mark.parametrize("backend", ["postgres"], indirect=True)

PID = "SELECT pg_backend_pid()"


async def _pooled_pid(database: Database) -> int:
    return int(await database.run_read(lambda conn: conn.execute(text(PID)).scalar_one()))


async def _terminate(database: Database, pid: int) -> None:
    """What a database restart or an idle-connection reaper does to a pooled connection."""
    with psycopg.connect(libpq_conninfo(database.url), autocommit=True) as admin:
        assert admin.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone() == (True,)
        for _ in range(200):  # the backend is gone (its socket closed) a moment after the signal
            if admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone() is None:
                return
            await asyncio.sleep(0.05)
    raise AssertionError(f"backend {pid} still there")


async def test_a_pooled_connection_the_server_closed_is_replaced_before_any_statement_fails(
    database: Database,
) -> None:
    for run in ("read", "one-statement write", "transaction"):
        pid = await _pooled_pid(database)
        await _terminate(database, pid)
        statement = text(PID)
        if run == "read":
            again = await database.run_read(lambda conn, s=statement: conn.execute(s).scalar_one())
        elif run == "one-statement write":
            again = await database.run_write(
                lambda conn, s=statement: conn.execute(s).scalar_one(), one_statement=True
            )
        else:
            again = await database.run_write(lambda conn, s=statement: conn.execute(s).scalar_one())
        assert again != pid, run  # a new connection, and no error for the caller


async def test_the_hot_paths_statements_stay_prepared_on_their_connection(database: Database) -> None:
    teams, apps = SqlTeamRepository(database), SqlAppRepository(database)
    team = await teams.create_team("Acme")
    app = await apps.create_app(team.id, "Bot", type="advanced")
    turns = SqlChatTurnRepository(database)
    for n in range(8):  # psycopg prepares a statement at its fifth execution on a connection
        await apps.get_app(team.id, app.id)  # every chat's first read
        items = (
            ChatItemRecord(data_id=f"h{n}", chat_id=f"c{n}", app_id=app.id, obj="Human", value=[]),
            ChatItemRecord(data_id=f"a{n}", chat_id=f"c{n}", app_id=app.id, obj="AI", value=[]),
        )
        turn = ChatTurn(team.id, app.id, f"c{n}", new_chat=True, variables={}, title="t", items=items)
        await turns.save_turn(turn)
        assert await turns.finish_turn(turn, items[1], variables_changed=False)
    prepared = await database.run_read(
        lambda conn: [row[0] for row in conn.execute(text("SELECT statement FROM pg_prepared_statements"))]
    )
    # one pooled connection served these sequential calls: a ROLLBACK anywhere on them would have left
    # none of their statements prepared
    assert any("FROM apps" in statement for statement in prepared), prepared
    assert any(statement.lstrip().startswith("UPDATE chat_items") for statement in prepared), prepared
