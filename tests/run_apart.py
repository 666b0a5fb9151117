"""``run_apart(coroutine)``: ``asyncio.run`` on a thread of its own, for test helpers called where this thread
may already run an event loop (a console test's Chromium: Playwright's sync API keeps one running; an async
test or fixture)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def run_apart(coroutine: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result(timeout)


__all__ = ["run_apart"]
