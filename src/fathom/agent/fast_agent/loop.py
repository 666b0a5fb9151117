"""The fastAgent provider's main loop (spec §3.6) over the kernel (``fathom.agent.kernel``)."""

from __future__ import annotations

from fathom.agent.fast_agent.model_turn import call_model
from fathom.agent.kernel import (
    RunState,
    checkpoint_when_full,
    finish_run,
    request_limit,
    run_tool_calls,
    start_run,
    stop_gate_rejects,
    tool_choice,
)
from fathom.agent.types import AgentLoopInput, AgentLoopResult, AgentLoopRuntime


async def _main_loop(state: RunState) -> None:
    limit = request_limit(state.runtime)
    for iteration in range(limit):
        if state.halted:
            return
        last = iteration == limit - 1
        tools = [] if last else state.catalog.schemas
        await checkpoint_when_full(state, tools)
        turn = await call_model(state, tools, tool_choice(state))
        if turn.error is not None:
            state.error = turn.error
            state.finish_reason = "error"
            return
        if not tools:
            turn.tool_calls = []  # tools were withheld: nothing the model names may run
        state.finish_reason = turn.finish_reason
        if turn.finish_reason == "close" and not turn.content and not turn.tool_calls:
            return
        state.append(turn.message)
        if not turn.tool_calls:
            state.consecutive_tool_rounds = 0
            if await stop_gate_rejects(state, state.append):
                continue
            return
        state.consecutive_tool_rounds += 1
        await run_tool_calls(state, turn.tool_calls)


async def run_fast_agent(input: AgentLoopInput, runtime: AgentLoopRuntime) -> AgentLoopResult:
    """The ``fastAgent`` provider."""
    state = await start_run(input, runtime)
    if not state.halted:
        await _main_loop(state)
    return await finish_run(state)
