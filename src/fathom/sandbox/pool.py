"""A small pool of pre-started, one-shot sandbox processes (spec §6.8.2: warm, used once, destroyed).

A warm process has already done everything before user code: namespaces, the minimal root, the
standard-library preload, the uid drop; it waits for its job on stdin. Each runs at most one job.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from fathom.sandbox.process import SpawnedProcess
from fathom.sandbox.types import Language

Spawner = Callable[[Language], Awaitable[SpawnedProcess | None]]
Disposer = Callable[[SpawnedProcess], Awaitable[None]]


class WarmPool:
    """Keeps up to ``size`` ready processes per language for the runner's default limits."""

    def __init__(self, size: int, spawn_ready: Spawner, dispose: Disposer) -> None:
        self.size = max(0, size)
        self._spawn_ready = spawn_ready
        self._dispose = dispose
        self._idle: dict[Language, list[SpawnedProcess]] = {"python": [], "javascript": []}
        self._pending: dict[Language, int] = {"python": 0, "javascript": 0}
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False

    def take(self, language: Language) -> SpawnedProcess | None:
        """A ready process (and a refill scheduled), or ``None`` when none is ready."""
        if self.size == 0 or self._closed:
            return None
        idle = self._idle[language]
        taken: SpawnedProcess | None = None
        while idle and taken is None:
            candidate = idle.pop()
            if candidate.proc.returncode is None:
                taken = candidate
            else:
                self._spawn_task(self._dispose(candidate))
        self.refill(language)
        return taken

    def refill(self, language: Language) -> None:
        """Start enough background spawns to bring ``language`` back to ``size`` ready processes."""
        if self._closed:
            return
        missing = self.size - len(self._idle[language]) - self._pending[language]
        for _ in range(max(0, missing)):
            self._pending[language] += 1
            self._spawn_task(self._fill_one(language))

    async def fill(self, language: Language) -> None:
        """Fill the pool for ``language`` and wait until the spawns finish."""
        self.refill(language)
        while self._pending[language] and self._tasks:
            await asyncio.wait(set(self._tasks))

    async def _fill_one(self, language: Language) -> None:
        try:
            spawned = await self._spawn_ready(language)
        finally:
            self._pending[language] -= 1
        if spawned is None:
            return
        if self._closed:
            await self._dispose(spawned)
        else:
            self._idle[language].append(spawned)

    def _spawn_task(self, coro: Awaitable[None]) -> None:
        async def wrapped() -> None:
            with contextlib.suppress(Exception):
                await coro

        task = asyncio.ensure_future(wrapped())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def aclose(self) -> None:
        """Stop refilling, wait for pending spawns and dispose every idle process."""
        self._closed = True
        if self._tasks:
            await asyncio.wait(set(self._tasks))
        for idle in self._idle.values():
            while idle:
                await self._dispose(idle.pop())
