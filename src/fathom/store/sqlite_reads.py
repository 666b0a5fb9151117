"""The search path's access to a SQLite file: read-only statements on stdlib ``sqlite3`` connections.

Serves :meth:`Database.read <fathom.store.db.Database.read>` and ``read_many`` on a SQLite file: every
statement a knowledge-base search runs (the full-text and vector legs, the chunk rows, the dataset
models), the chunk listing. Each call is one hop to a worker thread, where the statements run in one
snapshot on that thread's own connection (``query_only``, kept open): aiosqlite would make one hop per
cursor call (20 polls for one chunk-row read), which costs milliseconds on a busy machine (hybrid search
p50 37.5 → 16.2 ms on SQLite with the other changes of that work; ``docs/benchmarks.md``). Values come back
as the driver gives them (dates are text). It runs off the event loop's thread, unlike
:mod:`fathom.store.sqlite_batches`, because a search's statements scan: milliseconds, not microseconds.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from typing import Any

MMAP_BYTES = 1 << 30  # address space, not memory: the mapped pages are the OS page cache's


class SqliteReader:
    """``query_only`` ``sqlite3`` connections, one per worker thread, kept open between reads."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()

    async def read_many(
        self, statements: Sequence[tuple[str, Mapping[str, Any]]]
    ) -> list[list[Sequence[Any]]]:
        """The rows of each statement (``:name`` parameters), all in one snapshot, in one thread hop."""
        return await asyncio.to_thread(self._read, [(sql, dict(params)) for sql, params in statements])

    def _read(self, statements: list[tuple[str, dict[str, Any]]]) -> list[list[Sequence[Any]]]:
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = sqlite3.connect(self._path, timeout=30, check_same_thread=False)
            connection.execute("PRAGMA query_only=ON")
            # pages read straight from the file's mapping in the OS page cache instead of a read() into
            # SQLite's own small cache per page: a search touches a few hundred pages at random (full-text
            # rows, chunk rows); ~20 % less CPU for the full-text query and the chunk rows at 100k chunks
            connection.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
            self._local.connection = connection
            with self._lock:
                self._connections.append(connection)
        connection.execute("BEGIN")  # one snapshot for all the statements
        try:
            return [connection.execute(sql, params).fetchall() for sql, params in statements]
        finally:
            connection.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            for connection in self._connections:
                connection.close()
            self._connections.clear()
        self._local = threading.local()
