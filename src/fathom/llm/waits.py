"""A signal that the work in this context is about to wait on a model endpoint.

A chat turn stores its question and a ``running`` answer before any frame of its answer leaves the
server (:mod:`fathom.chat.chat_service`), but that write need not come before the model request: sent
first, the request travels and the model works while the write is done. The chat service runs a turn
in a context made by :func:`context_notifying`; the model clients call :func:`model_waits` right before
they send a request. Without a callback set, :func:`model_waits` is one ``ContextVar`` lookup.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable

_CALLBACK: contextvars.ContextVar[Callable[[], None] | None] = contextvars.ContextVar(
    "fathom_model_waits", default=None
)


def model_waits() -> None:
    """Called by a model client right before it sends a request (and then waits for the answer)."""
    callback = _CALLBACK.get()
    if callback is not None:
        callback()


def context_notifying(callback: Callable[[], None]) -> contextvars.Context:
    """A copy of the current context in which :func:`model_waits` calls ``callback`` (give it to
    ``loop.create_task(..., context=...)``; tasks started from it inherit it)."""
    context = contextvars.copy_context()
    context.run(_CALLBACK.set, callback)
    return context
