"""Cancellation for tool calls: an ``asyncio.Event``-compatible signal with a reason and timeouts.

Any object with ``is_set()`` and ``async wait()`` (e.g. a plain :class:`asyncio.Event`) works as a
signal; :class:`CancelSignal` adds a reason and a deadline.
"""

from __future__ import annotations

import asyncio
from typing import Protocol, runtime_checkable

__all__ = ["NEVER", "CancelSignal", "SignalLike"]


@runtime_checkable
class SignalLike(Protocol):
    """What a cancellation signal must offer (``asyncio.Event`` satisfies it)."""

    def is_set(self) -> bool: ...

    async def wait(self) -> object: ...


class CancelSignal:
    """A cancellation signal. ``cancel(reason)`` sets it; ``CancelSignal.after(seconds)`` sets itself."""

    __slots__ = ("_event", "_handle", "reason")

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self._handle: asyncio.TimerHandle | None = None
        self.reason: str | None = None

    @classmethod
    def after(cls, seconds: float, reason: str | None = None) -> CancelSignal:
        """A signal that cancels itself ``seconds`` from now (needs a running loop)."""
        signal = cls()
        text = reason or f"timed out after {seconds:g} seconds"
        signal._handle = asyncio.get_running_loop().call_later(seconds, signal.cancel, text)
        return signal

    def cancel(self, reason: str = "cancelled") -> None:
        if self._event.is_set():
            return
        self.reason = reason
        self._event.set()
        if self._handle is not None:
            self._handle.cancel()

    def is_set(self) -> bool:
        return self._event.is_set()

    async def wait(self) -> bool:
        return await self._event.wait()


class _NeverSignal:
    """A signal that is never set; waiting on it waits forever (bound to no loop, safe to share)."""

    __slots__ = ()
    reason = None

    def is_set(self) -> bool:
        return False

    async def wait(self) -> bool:
        await asyncio.get_running_loop().create_future()
        return True  # pragma: no cover - never reached


NEVER: SignalLike = _NeverSignal()
"""The signal tools receive when their caller gave none."""


def signal_reason(signal: SignalLike) -> str:
    """The reason a signal was set (``cancelled`` when it has none)."""
    reason = getattr(signal, "reason", None)
    return str(reason) if reason else "cancelled"
