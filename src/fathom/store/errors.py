"""Database errors sorted for their callers, in a module that imports no database framework.

A chat run, the worker loop and the HTTP error handler must tell an outage (the same call may succeed in
a few seconds: retry, answer 503) from a bug (a bad statement, a missing table, a constraint), and must
never show the driver's text to a client (it names the host, the port and the SQL). They sort the
exception here, so ``fathom.chat`` and the worker need not import SQLAlchemy to do it: the engine's
exception classes are registered by :mod:`fathom.store.db` when it is imported, which happens before
any of them can be raised (every repository holds a :class:`~fathom.store.db.Database`).
"""

from __future__ import annotations

import sqlite3

DATABASE_UNAVAILABLE = "database unavailable"
_SQLITE_BUSY_CODES = {sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED}

# SQLAlchemy's classes, registered by fathom.store.db: the wrapper of a driver error (its ``orig``), and
# the connection pool's "no connection free in time"
_wrappers: tuple[type[Exception], ...] = ()
_pool_timeouts: tuple[type[Exception], ...] = ()


def register_engine_errors(wrapper: type[Exception], pool_timeout: type[Exception]) -> None:
    """Name the engine's exception classes: ``wrapper`` carries the driver's error as ``orig``."""
    global _wrappers, _pool_timeouts
    _wrappers, _pool_timeouts = (wrapper,), (pool_timeout,)


def _driver_error(exc: BaseException) -> BaseException:
    """The driver's own error inside an engine's wrapper (``exc`` itself when it is not wrapped)."""
    return exc.orig if isinstance(exc, _wrappers) else exc  # type: ignore[attr-defined]


def sqlite_busy(exc: BaseException) -> bool:
    """Whether SQLite refused the call because another connection holds the lock it needs."""
    return getattr(_driver_error(exc), "sqlite_errorcode", None) in _SQLITE_BUSY_CODES


def database_errors() -> tuple[type[Exception], ...]:
    """The exception classes a database call may raise (the engine's and the drivers'), for a handler
    that sorts them with :func:`database_unavailable`."""
    errors: tuple[type[Exception], ...] = (*_wrappers, *_pool_timeouts, sqlite3.Error)
    try:
        import psycopg
    except ImportError:  # pragma: no cover - psycopg is a default dependency
        return errors
    return (*errors, psycopg.Error)


def is_database_error(exc: BaseException) -> bool:
    """Whether ``exc`` came from the database (an outage or not)."""
    return isinstance(exc, database_errors())


def database_unavailable(exc: BaseException) -> bool:
    """Whether ``exc`` says the database cannot be reached or used right now, so the same request may
    succeed in a few seconds: PostgreSQL's operational errors (connection refused or lost, the server
    shutting down or restarting), a connection pool exhausted, SQLite busy past its timeout. Not a bad
    statement, a missing table or a constraint. Its text (which names the host and port) is for logs only."""
    if isinstance(exc, _pool_timeouts):
        return True
    error = _driver_error(exc)
    if isinstance(error, sqlite3.OperationalError):
        return sqlite_busy(error)
    try:
        import psycopg
    except ImportError:  # pragma: no cover - psycopg is a default dependency
        return False
    return isinstance(error, psycopg.OperationalError)
