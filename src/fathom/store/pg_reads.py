"""PostgreSQL's read path: plain psycopg connections for the statements every search runs.

A read through the async engine costs, per check-out, a pre-ping (``SELECT 1``, one round trip), a
rollback when the connection goes back (another), SQLAlchemy's compilation of the ``text()`` construct
and two greenlet switches per driver call; a mixed search made five check-outs. Here a read is one
round trip on an autocommit connection kept open between searches, and several statements are sent
together in pipeline mode (one round trip for all of them). Statements keep the ``:name`` parameters of
SQLAlchemy's ``text()`` (and of SQLite), rewritten once per statement to psycopg's ``%(name)s`` by
``text()``'s own rule (``x::vector`` is a cast, not a parameter; its ``\\:`` escape is not supported).

A connection found broken when it is used (the server restarted, an idle connection was dropped) is
discarded and the statements run once more on a fresh one: they only read. Connections belong to the
event loop that opened them and are kept per loop; those of a loop that ended are dropped, and a forked
child leaves its parent's alone (it opens its own).

Autocommit gives each statement its own snapshot, as the engine's connections did (PostgreSQL's default
``READ COMMITTED`` takes one per statement inside a transaction too).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

import psycopg
from sqlalchemy.engine import make_url

# SQLAlchemy's own rule for a bind parameter in ``text()``: ``:name`` not preceded by ``:`` or a word
# character (so ``x::vector`` casts stay) and not followed by ``:``
_BIND = re.compile(r"(?<![:\w\\]):(\w+)(?!:)")
_CONVERTED_MAX = 2048  # distinct statements remembered (IN lists of other lengths are other statements)
IDLE_MAX = 8  # connections kept open between reads (per event loop)


def libpq_conninfo(url: str) -> str:
    """The libpq URL of a SQLAlchemy ``postgresql+psycopg://`` URL (query options such as sslmode kept)."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


class PostgresReader:
    """A small pool of autocommit psycopg connections running read-only statements."""

    def __init__(self, url: str, *, connect_timeout: int = 5) -> None:
        self.conninfo = libpq_conninfo(url)
        self.connect_timeout = connect_timeout
        # idle connections per event loop (a connection belongs to the loop that opened it)
        self._idle: dict[asyncio.AbstractEventLoop, list[psycopg.AsyncConnection[Any]]] = {}
        self._pid = os.getpid()  # connections are never shared with a forked child
        self._converted: dict[str, str] = {}
        self.connects = 0  # connections opened (for tests and logs)

    def convert(self, sql: str) -> str:
        """``sql`` with ``:name`` parameters as psycopg's ``%(name)s`` (a literal ``%`` doubled)."""
        converted = self._converted.get(sql)
        if converted is None:
            converted = _BIND.sub(r"%(\1)s", sql.replace("%", "%%"))
            if len(self._converted) >= _CONVERTED_MAX:
                self._converted.clear()
            self._converted[sql] = converted
        return converted

    async def _connect(self) -> psycopg.AsyncConnection[Any]:
        self.connects += 1
        return await psycopg.AsyncConnection.connect(
            self.conninfo, autocommit=True, connect_timeout=self.connect_timeout
        )

    def _take_idle(self, loop: asyncio.AbstractEventLoop) -> psycopg.AsyncConnection[Any] | None:
        if self._pid != os.getpid():  # a forked child: the parent's connections are the parent's to close
            self._idle, self._pid = {}, os.getpid()
        for other in [owner for owner in self._idle if owner.is_closed()]:  # loops that ended
            for conn in self._idle.pop(other, []):
                _drop(conn)
        idle = self._idle.get(loop)
        while idle:
            conn = idle.pop()
            if not conn.closed:
                return conn
        return None

    def _give_back(self, conn: psycopg.AsyncConnection[Any], loop: asyncio.AbstractEventLoop) -> None:
        idle = self._idle.setdefault(loop, [])
        ready = conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        if ready and not conn.closed and len(idle) < IDLE_MAX:
            idle.append(conn)
        else:
            _drop(conn)

    async def read_many(
        self, statements: Sequence[tuple[str, Mapping[str, Any]]]
    ) -> list[list[tuple[Any, ...]]]:
        """The rows of each statement (tuples, as the driver decodes them), one round trip for all."""
        loop = asyncio.get_running_loop()
        conn = self._take_idle(loop)
        reused = conn is not None
        if conn is None:
            conn = await self._connect()
        try:
            try:
                rows = await self._run(conn, statements)
            except psycopg.OperationalError:
                if not reused or not conn.closed:
                    raise
                _drop(conn)  # a connection that died while idle: once more on a fresh one
                conn = await self._connect()
                rows = await self._run(conn, statements)
        except BaseException:
            _drop(conn)
            raise
        self._give_back(conn, loop)
        return rows

    async def _run(
        self, conn: psycopg.AsyncConnection[Any], statements: Sequence[tuple[str, Mapping[str, Any]]]
    ) -> list[list[tuple[Any, ...]]]:
        if len(statements) == 1:
            sql, params = statements[0]
            cursor = await conn.execute(self.convert(sql), params)
            return [await cursor.fetchall()]
        async with conn.pipeline():
            cursors = [await conn.execute(self.convert(sql), params) for sql, params in statements]
            return [await cursor.fetchall() for cursor in cursors]

    async def close(self) -> None:
        """Close the idle connections (those of this loop politely, others' without their loop)."""
        idle, self._idle = self._idle, {}
        running = asyncio.get_running_loop()
        for owner, connections in idle.items():
            for conn in connections:
                if owner is not running:
                    _drop(conn)
                    continue
                with contextlib.suppress(psycopg.Error):
                    await conn.close()


def _drop(conn: psycopg.AsyncConnection[Any]) -> None:
    """Close a connection without waiting on its event loop (which may be gone)."""
    with contextlib.suppress(Exception):
        conn.pgconn.finish()
