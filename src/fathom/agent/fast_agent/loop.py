"""The fastAgent provider's main loop (spec §3.6) with ask / child-tool resume (spec §3.9)."""

from __future__ import annotations

import time
from typing import Any

from fathom.agent.compress.checkpoint import compress_history, needs_checkpoint
from fathom.agent.events import AfterMessageCompress, AskEvent, AskResume, StopGateEvent
from fathom.agent.fast_agent.model_turn import call_model
from fathom.agent.fast_agent.state import RunState
from fathom.agent.fast_agent.stop_gate import stop_gate_feedback
from fathom.agent.fast_agent.tool_runner import finish_generic, run_tool_calls
from fathom.agent.messages import find_tool_call, initial_messages, plain_messages, tool_message
from fathom.agent.system_prompt import compose_system_prompt
from fathom.agent.system_tools.ask import ASK_USER, ASK_WAITING_RESPONSE, build_ask_answer_text
from fathom.agent.system_tools.catalog import RunCatalog, build_run_catalog
from fathom.agent.system_tools.plan import normalize_plan
from fathom.agent.types import (
    AgentLoopInput,
    AgentLoopResult,
    AgentLoopRuntime,
    coerce_tool_result,
)
from fathom.agent.usage import sum_agent_call_usages
from fathom.tools import ToolResult, error_text
from fathom.tools.contract import maybe_await

TOOL_CHOICE_NONE_AFTER = 5
INTERACTIVE_NOT_SUPPORTED = "Interactive tool is not supported in fastAgent loop yet."


def run_system_prompt(input: AgentLoopInput, runtime: AgentLoopRuntime, catalog: RunCatalog) -> str | None:
    """The system message of a run: ``input.system_prompt`` through ``runtime.prompt_mode``."""
    return compose_system_prompt(input.system_prompt, runtime.prompt_mode, set(catalog.kinds.values()))


def pending_ask_context(state: AgentLoopInput) -> dict[str, Any] | None:
    provider_state = state.provider_state or {}
    pending = provider_state.get("pendingMainContext")
    if pending is None and isinstance(provider_state.get("providerState"), dict):  # legacy memory shape
        pending = provider_state["providerState"].get("pendingMainContext")
    return pending if isinstance(pending, dict) else None


async def resume_ask(state: RunState, pending: dict[str, Any], answer: str) -> None:
    """Continue from the paused context with the tool reply built from the questions and answer."""
    await state.emit(AskResume(answer))
    state.messages = plain_messages(pending.get("messages") or [])
    call_id = str(pending.get("askToolCallId") or "")
    if pending.get("activePlan") is not None:
        state.active_plan = normalize_plan(pending["activePlan"])
    text = build_ask_answer_text(find_tool_call(state.messages, call_id), answer)
    state.append(tool_message(call_id, text))


async def resume_ask_in_transcript(state: RunState, answer: str) -> bool:
    """Resume without ``pendingMainContext``: answer the newest ``ask_user`` call whose reply is still
    ``Waiting for user answer.`` in the transcript (False when there is none)."""
    for message in reversed(state.messages):
        if message.get("role") != "tool" or message.get("content") != ASK_WAITING_RESPONSE:
            continue
        call = find_tool_call(state.messages, str(message.get("tool_call_id") or ""))
        if call is None or call["function"]["name"] != ASK_USER:
            continue
        await state.emit(AskResume(answer))
        message["content"] = build_ask_answer_text(call, answer)
        state.assistant_messages.append(message)
        return True
    return False


async def resume_child(state: RunState, params: dict[str, Any]) -> None:
    """Run the interactive tool again with the child's answer; replace the matching tool message."""
    tool_params = params.get("toolParams") or {}
    call_id = str(tool_params.get("toolCallId") or "")
    legacy = tool_params.get("memoryRequestMessages")
    if legacy:
        state.messages = plain_messages(legacy)
    call = find_tool_call(state.messages, call_id) or {
        "id": call_id,
        "type": "function",
        "function": {"name": "", "arguments": ""},
    }
    started = time.monotonic()
    runtime = state.runtime
    if runtime.execute_interactive_tool is None:
        result = ToolResult(response=INTERACTIVE_NOT_SUPPORTED)
    else:
        try:
            result = coerce_tool_result(
                await maybe_await(runtime.execute_interactive_tool(call, list(state.messages), params))
            )
        except Exception as exc:
            text = f"Tool error: {error_text(exc)}"
            result = ToolResult(response=text, error_message=text)
    outcome = await finish_generic(state, call, result, started, compress=True)
    reply, *extra = outcome.messages
    for message in state.messages:
        if message.get("role") == "tool" and message.get("tool_call_id") == call_id:
            message["content"] = reply["content"]
            state.assistant_messages.append(message)
            break
    else:
        state.append(reply)
    for message in extra:
        state.append(message)


async def _checkpoint(state: RunState, tools: list[dict[str, Any]]) -> None:
    runtime = state.runtime
    max_context = runtime.model.config.max_context
    count = state.token_count(tools)
    if not runtime.context_compression or not needs_checkpoint(count, max_context):
        return
    outcome = await compress_history(
        state.messages,
        runtime.compress_model or runtime.model,
        max_context=max_context,
        active_plan=state.active_plan,
        token_count=count,
        user_key=runtime.user_key,
        params=runtime.llm_params,
    )
    if outcome.usage is not None:
        await state.push([outcome.usage])
        state.request_ids.extend(outcome.request_ids)
    if outcome.status == "error":
        return
    if outcome.context_checkpoint is not None:
        state.messages = outcome.messages
        state.context_checkpoint = outcome.context_checkpoint
        state.reset_token_cache()
    await state.emit(
        AfterMessageCompress(
            outcome.request_ids,
            outcome.seconds,
            usages=[outcome.usage] if outcome.usage else None,
            context_checkpoint=outcome.context_checkpoint,
        )
    )


async def _stop_gate_rejects(state: RunState) -> bool:
    config = state.runtime.stop_gate
    if config is None or state.stop_gate_rejections >= config.max_rejections:
        return False
    feedback = stop_gate_feedback(
        state.active_plan,
        require_plan=config.require_plan,
        tools_since_plan_update=state.tools_since_plan_update,
    )
    if feedback is None:
        return False
    state.stop_gate_rejections += 1
    state.append({"role": "user", "content": feedback, "hideInUI": True, "stopGate": True})
    await state.emit(StopGateEvent(feedback, state.stop_gate_rejections))
    return True


async def _main_loop(state: RunState) -> None:
    runtime = state.runtime
    limit = max(1, runtime.max_run_agent_times)
    for iteration in range(limit):
        if state.halted:
            return
        last = iteration == limit - 1
        tools = [] if last else state.catalog.schemas
        await _checkpoint(state, tools)
        choice = "none" if state.consecutive_tool_rounds > TOOL_CHOICE_NONE_AFTER else "auto"
        turn = await call_model(state, tools, choice)
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
            if not last and await _stop_gate_rejects(state):
                continue
            return
        state.consecutive_tool_rounds += 1
        await run_tool_calls(state, turn.tool_calls)


def _result(state: RunState) -> AgentLoopResult:
    runtime = state.runtime
    summary = [sum_agent_call_usages(state.usages, runtime.model.config.id)]
    base: dict[str, Any] = {
        "complete_messages": state.messages,
        "assistant_messages": state.assistant_messages,
        "request_ids": state.request_ids,
        "usages": summary,
        "finish_reason": state.finish_reason,
        "active_plan": state.active_plan,
        "provider_state": state.provider_state,
        "context_checkpoint": state.context_checkpoint,
    }
    if state.ask_pause is not None:
        return AgentLoopResult(status="paused", pause=state.ask_pause, **base)
    if runtime.is_stopping():
        return AgentLoopResult(status="aborted", **base)
    if state.child_pause is not None:
        return AgentLoopResult(status="paused", pause=state.child_pause, **base)
    if state.error is not None:
        return AgentLoopResult(status="error", error=state.error, **{**base, "finish_reason": "error"})
    return AgentLoopResult(status="done", **base)


async def run_fast_agent(input: AgentLoopInput, runtime: AgentLoopRuntime) -> AgentLoopResult:
    """The ``fastAgent`` provider."""
    state = RunState(
        input=input,
        runtime=runtime,
        catalog=build_run_catalog(runtime.tools, runtime.system_tools),
        active_plan=normalize_plan(input.active_plan),
        provider_state=None,
    )
    state.messages = initial_messages(input.messages, run_system_prompt(input, runtime, state.catalog))
    pending = pending_ask_context(input)
    if input.user_answer is not None and pending is not None:
        await resume_ask(state, pending, input.user_answer)
    elif input.user_answer is not None:
        await resume_ask_in_transcript(state, input.user_answer)
    elif input.children_interactive_params:
        await resume_child(state, input.children_interactive_params)
    if not state.halted:
        await _main_loop(state)
    result = _result(state)
    if result.status == "paused" and state.ask_pause is not None:
        await state.emit(AskEvent(state.ask_pause.ask, state.provider_state))
    return result
