"""``run_tool``: the two-phase tool executor (parse, then authorize + execute). It never raises.

Every failure becomes a model-visible :class:`ToolResult` (spec §2.3):

- unknown name → ``Call tool not found: {name}``
- parse failure → the parser's error message (the model can self-correct)
- authorize / execute / parse_output exception → ``Tool error: {text}`` (a ``parse_output`` failure
  is a :class:`ToolOutputError` on the host-facing path)
- cancelled by the signal → ``Tool call cancelled: {reason}``; past the timeout →
  ``Tool call timed out after {seconds} seconds``
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fathom.tools.cancel import NEVER, SignalLike, signal_reason
from fathom.tools.contract import (
    ToolCall,
    ToolContext,
    ToolDefinition,
    ToolResult,
    as_tool_definition,
    maybe_await,
    to_tool_result,
)
from fathom.tools.errors import ToolCancelledError, ToolOutputError, error_text

__all__ = ["run_tool", "execute_tool"]


def _find_tool(tools: Iterable[Any] | Mapping[str, Any], name: str) -> ToolDefinition | None:
    """Look a tool up by its model-facing name (``schema.function.name``)."""
    if isinstance(tools, Mapping):
        found = tools.get(name)
        return None if found is None else as_tool_definition(found)
    for tool in tools:
        definition = as_tool_definition(tool)
        if definition.name == name:
            return definition
    return None


async def _run_guarded(coro: Any, signal: SignalLike | None, timeout: float | None) -> Any:  # noqa: ASYNC109
    """Await ``coro``; cancel it when ``signal`` is set or ``timeout`` passes."""
    if signal is None and timeout is None:
        return await coro
    task = asyncio.ensure_future(coro)
    waiter = asyncio.ensure_future(signal.wait()) if signal is not None else None
    try:
        pending = {task} if waiter is None else {task, waiter}
        done, _ = await asyncio.wait(pending, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if task in done:
            return task.result()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        if waiter is not None and waiter in done:
            raise ToolCancelledError(f"Tool call cancelled: {signal_reason(signal)}")  # type: ignore[arg-type]
        raise ToolCancelledError(f"Tool call timed out after {timeout:g} seconds")
    finally:
        if waiter is not None and not waiter.done():
            waiter.cancel()
        if not task.done():
            task.cancel()


async def _authorize_execute(definition: ToolDefinition, ctx: ToolContext) -> Any:
    if definition.authorize is not None:
        await maybe_await(definition.authorize(ctx.params, ctx))
    value = await maybe_await(definition.execute(ctx))
    if definition.parse_output is not None:
        try:
            value = await maybe_await(definition.parse_output(value))
        except ToolOutputError:
            raise
        except Exception as exc:
            raise ToolOutputError(
                f"Tool {definition.name} returned an invalid output: {error_text(exc)}"
            ) from exc
    return value


async def execute_tool(
    definition: ToolDefinition,
    params: Any,
    *,
    call: ToolCall,
    messages: Sequence[Any] = (),
    app: Any = None,
    signal: SignalLike | None = None,
    timeout: float | None = None,  # noqa: ASYNC109 - bounds the tool task, not the caller
) -> Any:
    """Authorize once, execute, validate the output; raises on failure (host-facing path)."""
    if signal is not None and signal.is_set():
        raise ToolCancelledError(f"Tool call cancelled: {signal_reason(signal)}")
    limit = timeout if timeout is not None else definition.timeout
    ctx = ToolContext(
        call=call,
        messages=messages,
        params=params,
        signal=signal if signal is not None else NEVER,
        app=app,
        tool=definition,
    )
    return await _run_guarded(_authorize_execute(definition, ctx), signal, limit)


async def run_tool(
    call: Any,
    messages: Sequence[Any],
    tools: Iterable[Any] | Mapping[str, Any],
    *,
    signal: SignalLike | None = None,
    timeout: float | None = None,  # noqa: ASYNC109 - bounds the tool task, not the caller
    app: Any = None,
) -> ToolResult:
    """Run one model tool call against the declared ``tools``; every path returns a result."""
    try:
        tool_call = ToolCall.coerce(call)
    except Exception as exc:
        return ToolResult.failure(f"Tool error: invalid tool call: {error_text(exc)}")
    name = tool_call.function.name
    try:
        definition = _find_tool(tools, name)
    except Exception as exc:
        return ToolResult.failure(f"Tool error: {error_text(exc)}")
    if definition is None:
        return ToolResult.failure(f"Call tool not found: {name}")
    try:
        parsed = definition.parse_arguments(tool_call.function.arguments)
    except Exception as exc:
        return ToolResult.failure(f"Tool error: {error_text(exc)}")
    if not parsed.success:
        return ToolResult.failure(parsed.error_message)
    try:
        value = await execute_tool(
            definition,
            parsed.data,
            call=tool_call,
            messages=messages,
            app=app,
            signal=signal,
            timeout=timeout,
        )
        return to_tool_result(value)
    except ToolCancelledError as exc:
        return ToolResult.failure(str(exc))
    except Exception as exc:
        return ToolResult.failure(f"Tool error: {error_text(exc)}")
