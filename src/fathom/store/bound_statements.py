"""The chat hot path's statements that bind values only, sent straight to the driver on a SQLite file.

A :class:`BoundStatement` is a Core statement (an ``UPDATE`` whose values and conditions are all bound
parameters, an ``INSERT`` of given columns, or a ``SELECT`` read for its first row) with the parameter
names it is executed with. On the connections of :class:`~fathom.store.sqlite_batches.SqliteFileBatches`
(stdlib ``sqlite3``, no engine events, no echo) it is compiled once by SQLAlchemy for that dialect, and
each execution converts the values with the compiled statement's own bind processors (JSON, UTC
datetimes, booleans: the same text stored) and hands the SQL and the tuple to the ``sqlite3`` cursor; a
row read back is converted by the statement's result processors (the values ``Connection.execute``
gives, in a named tuple). That takes a third of ``Connection.execute``'s time, which compiles from its
cache, builds an execution context and a result per statement. A driver error is raised as SQLAlchemy
raises it (the same ``DBAPIError`` subclass, ``orig`` the driver's). Any other connection (PostgreSQL,
aiosqlite, an engine with events or echo) runs ``Connection.execute``.
"""

from __future__ import annotations

import sqlite3
from collections import namedtuple
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql.dml import Insert, Update
from sqlalchemy.sql.selectable import Select

_DRIVER = "pysqlite"  # the sync stdlib driver of SqliteFileBatches' engines


def _row_class(names: list[str]) -> Callable[..., Any]:
    """A named tuple of these fields: a row read back, its values by attribute as on SQLAlchemy's rows
    (``_asdict()`` too)."""
    return namedtuple("Row", names, rename=True)  # noqa: PYI024 (a label no identifier: _0, _1...)


@dataclass(frozen=True)
class _Compiled:
    """The statement's SQL and, per ``?`` in order, the name of its parameter (None: a constant of the
    statement, given as ``constant``) and the bind processor of its type."""

    sql: str
    names: tuple[str | None, ...]
    constants: tuple[Any, ...]
    processors: tuple[Callable[[Any], Any] | None, ...]
    # a SELECT's row: its class (attributes named as SQLAlchemy's row keys) and a result processor per column
    row: Callable[..., Any] | None = None
    column_processors: tuple[Callable[[Any], Any] | None, ...] = ()

    def row_of(self, values: Sequence[Any]) -> Any:
        assert self.row is not None
        return self.row(
            *(
                value if process is None else process(value)
                for value, process in zip(values, self.column_processors, strict=True)
            )
        )

    def values(self, params: Mapping[str, Any]) -> tuple[Any, ...]:
        return tuple(
            (params[name] if name is not None else constant)
            if process is None
            else process(params[name] if name is not None else constant)
            for name, constant, process in zip(self.names, self.constants, self.processors, strict=True)
        )


class BoundStatement:
    """``statement`` executed with exactly the parameters ``keys`` (module doc)."""

    def __init__(self, statement: Insert | Update | Select[Any], keys: Sequence[str]) -> None:
        self.statement = statement
        self.keys = tuple(keys)
        self._compiled: _Compiled | None = None

    def execute(self, conn: Connection, params: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> Any:
        """Run it with one row of parameters, or many (``executemany``); returns an object with the
        ``rowcount`` of the statement."""
        if conn.dialect.driver != _DRIVER or conn._has_events or conn.engine.echo:
            return conn.execute(self.statement, params)
        compiled = self._compiled or self._compile(conn.dialect)
        driver = conn.connection.driver_connection
        assert isinstance(driver, sqlite3.Connection)
        many = not isinstance(params, Mapping)
        try:
            if isinstance(params, Mapping):
                return driver.execute(compiled.sql, compiled.values(params))
            return driver.executemany(compiled.sql, [compiled.values(row) for row in params])
        except sqlite3.Error as exc:
            raise DBAPIError.instance(
                compiled.sql,
                None,
                exc,
                sqlite3.Error,
                hide_parameters=True,
                dialect=conn.dialect,
                ismulti=many,
            ) from exc

    def first(self, conn: Connection, params: Mapping[str, Any]) -> Any:
        """A ``SELECT``'s first row, or a statement's first ``RETURNING`` row (attribute access by column
        key), or None."""
        if conn.dialect.driver != _DRIVER or conn._has_events or conn.engine.echo:
            return conn.execute(self.statement, params).first()
        compiled = self._compiled or self._compile(conn.dialect)
        driver = conn.connection.driver_connection
        assert isinstance(driver, sqlite3.Connection)
        try:
            cursor = driver.execute(compiled.sql, compiled.values(params))
            values = cursor.fetchone()
            cursor.close()
        except sqlite3.Error as exc:
            raise DBAPIError.instance(
                compiled.sql, None, exc, sqlite3.Error, hide_parameters=True, dialect=conn.dialect
            ) from exc
        return None if values is None else compiled.row_of(values)

    def _compile(self, dialect: Dialect) -> _Compiled:
        compiled = self.statement.compile(dialect=dialect, column_keys=list(self.keys))
        if compiled.insert_prefetch or compiled.update_prefetch:  # Python-side defaults to compute
            raise ValueError(f"{self.statement}: give every column with a Python default a value")
        names: list[str | None] = []
        constants: list[Any] = []
        processors: list[Callable[[Any], Any] | None] = []
        bind_processors = compiled._bind_processors
        for name in compiled.positiontup or ():
            bind = compiled.binds[name]
            if name in self.keys:
                names.append(name)
                constants.append(None)
            elif bind.callable is None and not bind.required:
                names.append(None)
                constants.append(bind.value)
            else:
                raise ValueError(f"{self.statement}: parameter {name} is not one of {self.keys}")
            processors.append(bind_processors.get(name))  # type: ignore[arg-type]
        row_class: Callable[..., Any] | None = None
        column_processors: list[Callable[[Any], Any] | None] = []
        if compiled._result_columns:  # a SELECT's columns, or a RETURNING's
            columns = compiled._result_columns
            row_class = _row_class([column[0] for column in columns])
            column_processors = [column[3]._cached_result_processor(dialect, None) for column in columns]
        self._compiled = _Compiled(
            compiled.string,
            tuple(names),
            tuple(constants),
            tuple(processors),
            row_class,
            tuple(column_processors),
        )
        return self._compiled
