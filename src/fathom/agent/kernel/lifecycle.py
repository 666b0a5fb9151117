"""A run's start and end, the same for every provider (spec §3.6, §3.9): the system prompt, resuming an
ask or a child tool, the tool_choice flip, and the result built from the run's state."""

from __future__ import annotations

import time
from typing import Any

from fathom.agent.events import AskEvent, AskResume
from fathom.agent.kernel.state import RunState
from fathom.agent.kernel.tools import finish_generic
from fathom.agent.messages import find_tool_call, initial_messages, plain_messages, tool_message
from fathom.agent.system_prompt import compose_system_prompt
from fathom.agent.system_tools.ask import ASK_USER, ASK_WAITING_RESPONSE, build_ask_answer_text
from fathom.agent.system_tools.catalog import RunCatalog, build_run_catalog
from fathom.agent.system_tools.plan import normalize_plan
from fathom.agent.types import AgentLoopInput, AgentLoopResult, AgentLoopRuntime, coerce_tool_result
from fathom.agent.usage import sum_agent_call_usages
from fathom.tools import ToolResult, error_text
from fathom.tools.contract import maybe_await

TOOL_CHOICE_NONE_AFTER = 5
"""After this many consecutive tool rounds the next request sends ``tool_choice: none`` (spec §3.6.4)."""
INTERACTIVE_NOT_SUPPORTED = "Interactive tool is not supported in fastAgent loop yet."


def tool_choice(state: RunState) -> str:
    """``none`` once the model has called tools more than :data:`TOOL_CHOICE_NONE_AFTER` rounds running."""
    return "none" if state.consecutive_tool_rounds > TOOL_CHOICE_NONE_AFTER else "auto"


def request_limit(runtime: AgentLoopRuntime) -> int:
    """How many model requests one run may make (at least one)."""
    return max(1, runtime.max_run_agent_times)


def _run_system_prompt(input: AgentLoopInput, runtime: AgentLoopRuntime, catalog: RunCatalog) -> str | None:
    """The system message of a run: ``input.system_prompt`` through ``runtime.prompt_mode``."""
    return compose_system_prompt(input.system_prompt, runtime.prompt_mode, set(catalog.kinds.values()))


def _pending_ask_context(state: AgentLoopInput) -> dict[str, Any] | None:
    provider_state = state.provider_state or {}
    pending = provider_state.get("pendingMainContext")
    if pending is None and isinstance(provider_state.get("providerState"), dict):  # legacy memory shape
        pending = provider_state["providerState"].get("pendingMainContext")
    return pending if isinstance(pending, dict) else None


async def _resume_ask(state: RunState, pending: dict[str, Any], answer: str) -> None:
    """Continue from the paused context with the tool reply built from the questions and answer."""
    await state.emit(AskResume(answer))
    state.messages = plain_messages(pending.get("messages") or [])
    call_id = str(pending.get("askToolCallId") or "")
    if pending.get("activePlan") is not None:
        state.active_plan = normalize_plan(pending["activePlan"])
    text = build_ask_answer_text(find_tool_call(state.messages, call_id), answer)
    state.append(tool_message(call_id, text))


async def _resume_ask_in_transcript(state: RunState, answer: str) -> bool:
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


async def _resume_child(state: RunState, params: dict[str, Any]) -> None:
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


async def start_run(input: AgentLoopInput, runtime: AgentLoopRuntime) -> RunState:
    """The state a run starts from: catalog, plan, system prompt and transcript, and — when the input
    answers a pause — the resumed ask or child tool already applied."""
    state = RunState(
        input=input,
        runtime=runtime,
        catalog=build_run_catalog(runtime.tools, runtime.system_tools),
        active_plan=normalize_plan(input.active_plan),
    )
    state.messages = initial_messages(input.messages, _run_system_prompt(input, runtime, state.catalog))
    pending = _pending_ask_context(input)
    if input.user_answer is not None and pending is not None:
        await _resume_ask(state, pending, input.user_answer)
    elif input.user_answer is not None:
        await _resume_ask_in_transcript(state, input.user_answer)
    elif input.children_interactive_params:
        await _resume_child(state, input.children_interactive_params)
    return state


async def finish_run(state: RunState) -> AgentLoopResult:
    """The run's result from its state (paused, aborted, error or done), and ``ask`` when it paused on
    an ask."""
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
        result = AgentLoopResult(status="paused", pause=state.ask_pause, **base)
        await state.emit(AskEvent(state.ask_pause.ask, state.provider_state))
        return result
    if runtime.is_stopping():
        return AgentLoopResult(status="aborted", **base)
    if state.child_pause is not None:
        return AgentLoopResult(status="paused", pause=state.child_pause, **base)
    if state.error is not None:
        return AgentLoopResult(status="error", error=state.error, **{**base, "finish_reason": "error"})
    return AgentLoopResult(status="done", **base)
