"""A new turn's first write, overlapped with the start of its run.

A turn is stored as it starts (the question and a ``running`` answer, one transaction) and no frame of
its answer leaves the server before that write is committed: the chat service hands the run's channel
to the response only then. The write need not come before the run, though: the run starts first, and
the write is done once the run is about to wait on its model (its request sent, the model working:
:func:`fathom.llm.waits.model_waits`), instead of adding its time to the wait for the first frame.
The write also starts when the run waits for it (to store its end), when the run has ended, or after
``turns`` turns of the event loop, whichever comes first: a run that waits on something else first
(an HTTP node, a tool) has its turn stored after a few turns, as before. Frames the run pushes
meanwhile wait in its channel. A crash before the write leaves nothing, as a crash before the run
did: the client has received nothing then, not even the response's status.

A run that ends before its first write has begun (a workflow without a model or anything else to wait
on) takes the write over: it stores the whole turn, question and finished answer, in one transaction
(:meth:`TurnStart.take_over`), instead of the running answer and then its end in two. Nothing was ever
visible in between, so a reader sees the same as a run that took no time; a failure of that write is
raised to the client as the first write's failure was (nothing stored, nothing sent).
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable

from fathom.llm.waits import context_notifying

WRITE_AFTER_TURNS = 16  # a simple chat app's run is about to wait on its model after 2 to 5


class TurnStart:
    """The first write of a new turn and the run it overlaps: start the run in :attr:`context`, then
    :meth:`write`; the run calls :meth:`stored` before it stores its end."""

    def __init__(self, turns: int = WRITE_AFTER_TURNS) -> None:
        self._loop = asyncio.get_running_loop()
        self._ready = self._loop.create_future()
        self._stored = self._loop.create_future()
        self._turns = turns
        self._writing = False  # write() has begun the first write
        self.taken_over = False  # the run stores the whole turn instead (take_over)
        self.context: contextvars.Context = context_notifying(self._open)

    async def write(self, run: asyncio.Task[None], write: Callable[[], Awaitable[None]]) -> None:
        """``write()`` once the run is about to wait (or after the turns); if it fails (or this is
        cancelled), the run is cancelled and the error raised: the turn was not stored."""
        run.add_done_callback(self._open)
        self._loop.call_soon(self._tick, self._turns)
        try:
            await self._ready
            if self.taken_over:
                await self._stored  # the run's own write of the whole turn (its error raised here)
                return
            self._writing = True
            await write()
        except BaseException:
            self._stored.cancel()
            run.cancel()
            raise
        self._stored.set_result(None)

    async def stored(self) -> None:
        """For the run: wait until the turn's first write is committed (it starts now, if not yet)."""
        self._open()
        await self._stored

    def take_over(self) -> bool:
        """For a run that has ended: True when the first write has not begun, which it now never will:
        the run stores the whole turn and reports it with :meth:`whole_stored`. False: call
        :meth:`stored` and store the turn's end as usual."""
        if self._writing or self._stored.done():
            return False
        self.taken_over = True
        self._open()
        return True

    def whole_stored(self, error: BaseException | None = None) -> None:
        """For a run that took the write over: the whole turn is committed (or ``error``: it is not)."""
        if self._stored.done():  # write() was cancelled meanwhile
            return
        if error is None:
            self._stored.set_result(None)
        else:
            self._stored.set_exception(error)

    def _open(self, *_: object) -> None:
        if not self._ready.done():
            self._ready.set_result(None)

    def _tick(self, left: int) -> None:
        if self._ready.done():
            return
        if left <= 0:
            self._open()
            return
        self._loop.call_soon(self._tick, left - 1)
