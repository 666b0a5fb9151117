"""A PostgreSQL connection's liveness, checked at every pool check-out without a round trip.

SQLAlchemy's ``pool_pre_ping`` sends ``SELECT 1`` and waits for the answer at every check-out: on the chat
hot path three round trips a chat (the turn's start, its end, the usage counters), each with its share of
driver and event-loop work. What the ping guards against is a connection the server has closed (a
restart, a failover, ``pg_terminate_backend``, an idle-connection reaper): the server then sends its
error and closes the socket, so an idle connection whose socket has anything to read is one the server
is done with (a pooled connection does not ``LISTEN`` and has no query running; a parameter change the
server reports unasked also makes it readable, and costs only a reconnect). :func:`discard_dead_connection`
asks the socket that, with a zero-timeout ``poll``, and has the pool replace such a connection
(``DisconnectionError``: SQLAlchemy connects anew and tries again). A connection that breaks after the
check, or a server that vanished without closing anything, fails its statement, as it would have
failed a ping; SQLAlchemy then invalidates the whole pool and the next check-outs connect anew.
"""

from __future__ import annotations

import select
from typing import Any

from sqlalchemy.exc import DisconnectionError

# where select.poll is missing (not Linux or macOS) the pool keeps pool_pre_ping's round trip instead
CHECKS_SOCKETS = hasattr(select, "poll")


def discard_dead_connection(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
    """The pool's ``checkout`` event: raise ``DisconnectionError`` for a connection the server closed."""
    connection = getattr(dbapi_connection, "driver_connection", dbapi_connection)  # psycopg's own
    if connection.closed or connection.broken:
        raise DisconnectionError("the connection is closed")
    try:
        socket = connection.pgconn.socket
        poller = select.poll()
        poller.register(socket, select.POLLIN | select.POLLERR | select.POLLHUP)
        events = poller.poll(0)
    except Exception as exc:  # no socket any more: as dead as it gets
        raise DisconnectionError(f"the connection has no usable socket: {exc}") from exc
    if events:
        raise DisconnectionError("the server closed the connection (its socket has something to read)")
