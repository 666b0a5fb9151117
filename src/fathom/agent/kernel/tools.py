"""Running one response's tool calls (spec §3.6.5–§3.6.8), for every provider.

System tools run serially in call order; consecutive runtime tools run concurrently in batches of
``max(1, batch_tool_size)``. After each serial tool or batch, a pause/stop/abort leaves the remaining
calls unscheduled. Results are appended in the original call order (tool message, then the tool's
non-empty assistant messages). Plan and ask emit only their own events and push no usage.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from fathom.agent.compress.tool_response import compress_tool_response
from fathom.agent.events import AskStart, PlanOperation, ToolResponseCompress, ToolRunEnd, ToolRunStart
from fathom.agent.kernel.state import RunState
from fathom.agent.messages import is_empty_assistant, plain_messages, tool_message
from fathom.agent.system_tools.ask import ASK_WAITING_RESPONSE, parse_ask_arguments
from fathom.agent.system_tools.files_search import run_dataset_search, run_read_files
from fathom.agent.system_tools.plan import SET_PLAN, run_set_plan, run_update_plan
from fathom.agent.system_tools.sandbox import run_sandbox_tool
from fathom.agent.types import AskPause, ToolChildPause, coerce_tool_result, skips_response_compress
from fathom.agent.usage import normalize_usages
from fathom.tools import ToolResult, error_text, run_tool

PROVIDER_STATE_VERSION = 1
"""Version of the persisted ``providerState`` shape (bump on an incompatible change; readers accept
older shapes for one version window)."""


@dataclass
class CallOutcome:
    """Messages one call contributes, in order."""

    messages: list[dict[str, Any]] = field(default_factory=list)


async def _execute_generic(
    state: RunState, call: dict[str, Any], snapshot: list[dict[str, Any]]
) -> ToolResult:
    """Run a sandbox/read_files/dataset_search/runtime call; never raises."""
    system = state.runtime.system_tools
    kind = state.catalog.kind(call["function"]["name"])
    try:
        if kind == "sandbox":
            client = system.sandbox.client if system.sandbox is not None else None
            return await run_sandbox_tool(call, snapshot, client)
        if kind == "read_files":
            return await run_read_files(call, system.read_file)
        if kind == "dataset_search":
            return await run_dataset_search(call, system.dataset_search)
        if state.runtime.execute_tool is not None:
            return coerce_tool_result(await state.runtime.execute_tool(call, snapshot))
        return await run_tool(call, snapshot, state.catalog.runtime, signal=state.runtime.signal)
    except Exception as exc:
        text = f"Tool error: {error_text(exc)}"
        return ToolResult(response=text, error_message=text)


async def finish_generic(
    state: RunState, call: dict[str, Any], result: ToolResult, started: float, *, compress: bool
) -> CallOutcome:
    """Compress (unless skipped), emit ``tool_run_end``, bill once, record pause/stop."""
    raw = result.response
    response, compress_event = raw, None
    usages = normalize_usages(result.usages)
    runtime = state.runtime
    if compress and runtime.tool_response_compression and not skips_response_compress(result):
        model = runtime.compress_model or runtime.model
        outcome = await compress_tool_response(
            raw, model, max_context=runtime.model.config.max_context, user_key=runtime.user_key
        )
        if outcome.compressed:
            response = outcome.response
            compress_event = ToolResponseCompress(
                response, outcome.usage, outcome.request_ids, outcome.seconds
            )
            if outcome.usage is not None:
                usages.append(outcome.usage)
    extra = [m for m in plain_messages(result.assistant_messages) if not is_empty_assistant(m)]
    await state.emit(
        ToolRunEnd(
            call=call,
            raw_response=raw,
            response=response,
            seconds=time.monotonic() - started,
            assistant_messages=extra or None,
            error_message=result.error_message,
            usages=usages or None,
            tool_response_compress=compress_event,
            metadata=result.metadata or None,
        )
    )
    await state.push(usages)
    if result.interactive is not None:
        state.child_pause = ToolChildPause(result.interactive, call["id"])
    if result.stop:
        state.stop = True
    return CallOutcome([tool_message(call["id"], response), *extra])


async def run_generic(state: RunState, call: dict[str, Any], snapshot: list[dict[str, Any]]) -> CallOutcome:
    """``tool_run_start`` → execute → ``tool_run_end``; runtime tools' responses are compressed."""
    await state.emit(ToolRunStart(call))
    started = time.monotonic()
    result = await _execute_generic(state, call, snapshot)
    is_runtime = state.catalog.kind(call["function"]["name"]) == "runtime"
    state.tools_since_plan_update = state.tools_since_plan_update or is_runtime
    return await finish_generic(state, call, result, started, compress=is_runtime)


async def run_plan(state: RunState, call: dict[str, Any]) -> CallOutcome:
    """``set_plan`` / ``update_plan``: reducer, ``plan_operation`` event, no usage."""
    started = time.monotonic()
    raw = call["function"]["arguments"]
    if call["function"]["name"] == SET_PLAN:
        outcome = run_set_plan(raw)
    else:
        outcome = run_update_plan(raw, state.active_plan)
    if outcome.success:
        state.active_plan = outcome.plan
        state.tools_since_plan_update = False
    await state.emit(
        PlanOperation(
            operation=outcome.operation,
            message=outcome.message,
            success=outcome.success,
            id=call["id"],
            params=outcome.params,
            seconds=time.monotonic() - started,
            plan=outcome.plan if outcome.success else None,
            error=outcome.error,
        )
    )
    return CallOutcome([tool_message(call["id"], outcome.response)])


async def run_ask(state: RunState, call: dict[str, Any], before: list[dict[str, Any]]) -> CallOutcome:
    """``ask_user``: parse errors are tool replies; a valid ask emits ``ask_start`` and pauses."""
    started = time.monotonic()
    parsed = parse_ask_arguments(call["function"]["arguments"])
    if parsed.ask is None:
        return CallOutcome([tool_message(call["id"], parsed.error or "")])
    await state.emit(AskStart(parsed.ask, call["id"], parsed.ask, time.monotonic() - started))
    state.ask_pause = AskPause(parsed.ask, call["id"])
    assistant = state.messages[-1]
    paused_assistant = {k: v for k, v in assistant.items() if k in ("role", "content", "reasoning_content")}
    done_ids = {m.get("tool_call_id") for m in before}
    paused_assistant["tool_calls"] = [
        c for c in assistant.get("tool_calls") or [] if c["id"] in done_ids or c["id"] == call["id"]
    ]
    state.provider_state = {
        **(state.input.provider_state or {}),
        "version": PROVIDER_STATE_VERSION,
        "pendingMainContext": {
            "messages": [*state.messages[:-1], paused_assistant, *before],
            "askToolCallId": call["id"],
            "activePlan": state.active_plan,
        },
    }
    return CallOutcome([tool_message(call["id"], ASK_WAITING_RESPONSE)])


async def run_tool_calls(state: RunState, calls: list[dict[str, Any]]) -> None:
    """Schedule ``calls`` (serial system tools, batched runtime tools) and append results in order."""
    snapshot = [dict(m) for m in state.messages]
    outcomes: dict[int, CallOutcome] = {}
    size = max(1, state.runtime.batch_tool_size)
    index = 0
    while index < len(calls) and not state.halted:
        call = calls[index]
        kind = state.catalog.kind(call["function"]["name"])
        if kind == "plan":
            outcomes[index] = await run_plan(state, call)
            index += 1
        elif kind == "ask":
            done = [m for i in sorted(outcomes) for m in outcomes[i].messages]
            outcomes[index] = await run_ask(state, call, done)
            index += 1
        elif not state.catalog.is_batchable(call["function"]["name"]):
            outcomes[index] = await run_generic(state, call, snapshot)
            index += 1
        else:
            batch: list[int] = []
            while (
                index < len(calls)
                and len(batch) < size
                and state.catalog.is_batchable(calls[index]["function"]["name"])
            ):
                batch.append(index)
                index += 1
            results = await asyncio.gather(*(run_generic(state, calls[i], snapshot) for i in batch))
            outcomes.update(zip(batch, results, strict=True))
    if len(outcomes) < len(calls):  # unscheduled calls leave the transcript (no dangling tool_calls)
        assistant = state.messages[-1]
        assistant["tool_calls"] = [c for i, c in enumerate(calls) if i in outcomes]
    for position in sorted(outcomes):
        for message in outcomes[position].messages:
            state.append(message)
