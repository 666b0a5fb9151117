"""The ``pydanticAI`` provider: the same contract, with the loop delegated to pydantic-ai.

Optional: needs ``pydantic-ai-slim[openai]`` (extra ``agents-pydantic-ai``). pydantic-ai drives the
model ⇄ tools loop (requests, tool scheduling); Fathom keeps the tool contract (``run_tool`` replies,
tool events, response compression, usage pushed once per model call and billed tool), the system tools,
the tool_choice flip, tool withholding on the last request, and ask / child-tool pause and resume (a
pausing tool ends the pydantic-ai run; the transcript is rebuilt as fastAgent builds it), the stop
gate (a rejected answer gets the hidden feedback and a new pydantic-ai run continues the transcript)
and the prompt mode. What pydantic-ai cannot do is listed in :data:`PYDANTIC_AI_GAPS`; asking for it
gives a clear error result.
"""

from __future__ import annotations

import json
import time
from typing import Any

from fathom.agent.events import LLMRequestEnd, LLMRequestStart
from fathom.agent.kernel import (
    RunState,
    StreamHandler,
    finish_run,
    request_limit,
    run_ask,
    run_generic,
    run_plan,
    start_run,
    stop_gate_rejects,
    tool_choice,
)
from fathom.agent.pydantic_ai_bridge import from_pydantic_ai_messages, to_pydantic_ai_history
from fathom.agent.types import AgentLoopInput, AgentLoopResult, AgentLoopRuntime
from fathom.llm import ReasoningDelta, TextDelta, ToolCallStart, ToolParamsDelta
from fathom.tools import error_text

PYDANTIC_AI_PROVIDER = "pydanticAI"

PYDANTIC_AI_GAPS: dict[str, str] = {
    "context_checkpoint": "pydantic-ai has no hook for Fathom's history checkpoint compression",
    "unknown_tool_reply": "pydantic-ai answers an unknown tool name with its own retry prompt",
    "invalid_json_reply": (
        "pydantic-ai answers tool arguments that are not JSON with its own retry prompt (the tool never runs)"
    ),
    "prompt_tool_calling": "pydanticAI provider needs a model with native function calling",
    "tool_batches": (
        "pydantic-ai runs a response's runtime tools all at once; only batch_tool_size=1 (serial) is honoured"
    ),
}


class ProviderGapError(RuntimeError):
    """The run asked for a part of the contract this provider cannot honour."""


class _Pause(Exception):
    """Raised inside a tool to end the pydantic-ai run at an ask or child pause."""


def _require(input: AgentLoopInput, runtime: AgentLoopRuntime) -> None:
    if not runtime.model.config.function_calling:
        raise ProviderGapError(PYDANTIC_AI_GAPS["prompt_tool_calling"])


def _tools(state: RunState, step: dict[str, list[dict[str, Any]]]) -> list[Any]:
    """pydantic-ai tools over the run's catalog; each records its messages in ``step`` (call id →
    messages) so a pause can rebuild the transcript the way fastAgent does."""
    from pydantic_ai import RunContext, Tool

    from fathom.agent.pydantic_ai_bridge import from_pydantic_ai_messages as to_openai

    limit = request_limit(state.runtime)

    async def withhold_on_last_request(ctx: RunContext[Any], tool_def: Any) -> Any:
        return None if state.request_index >= limit else tool_def  # counted over every run

    tools = []
    for schema in state.catalog.schemas:
        function = schema["function"]
        name = function["name"]
        kind = state.catalog.kind(name)

        async def call_tool(ctx: RunContext[Any], _name: str = name, _kind: str = kind, **kwargs: Any) -> str:
            if state.runtime.is_stopping():  # aborted: schedule nothing more
                raise _Pause()
            call: dict[str, Any] = {
                "id": ctx.tool_call_id or "",
                "type": "function",
                "function": {"name": _name, "arguments": json.dumps(kwargs, ensure_ascii=False)},
            }
            if _kind == "plan":
                outcome = await run_plan(state, call)
            elif _kind == "ask":
                before = [m for messages in step.values() for m in messages]
                outcome = await run_ask(state, call, before)
            else:
                outcome = await run_generic(state, call, [*state.messages, *to_openai(ctx.messages)])
            step[call["id"]] = outcome.messages
            if state.ask_pause is not None or state.child_pause is not None:
                raise _Pause()
            return str(outcome.messages[0]["content"])

        tool = Tool.from_schema(
            call_tool,
            name=name,
            description=function.get("description") or "",
            json_schema=function.get("parameters") or {"type": "object", "properties": {}},
            takes_ctx=True,
            sequential=kind != "runtime" or state.runtime.batch_tool_size <= 1,
        )
        tool.prepare = withhold_on_last_request
        tools.append(tool)
    return tools


def _convert_event(event: Any) -> Any:
    from pydantic_ai.messages import (
        PartDeltaEvent,
        PartStartEvent,
        TextPart,
        TextPartDelta,
        ThinkingPart,
        ThinkingPartDelta,
        ToolCallPart,
        ToolCallPartDelta,
    )

    if isinstance(event, PartStartEvent):
        part = event.part
        if isinstance(part, TextPart) and part.content:
            return [TextDelta(part.content)]
        if isinstance(part, ThinkingPart) and part.content:
            return [ReasoningDelta(part.content)]
        if isinstance(part, ToolCallPart):
            out: list[Any] = [ToolCallStart(part.tool_call_id, part.tool_name, event.index)]
            args = part.args if isinstance(part.args, str) else json.dumps(part.args) if part.args else ""
            if args:
                out.append(ToolParamsDelta(part.tool_call_id, args))
            return out
    if isinstance(event, PartDeltaEvent):
        delta = event.delta
        if isinstance(delta, TextPartDelta):
            return [TextDelta(delta.content_delta)]
        if isinstance(delta, ThinkingPartDelta) and delta.content_delta:
            return [ReasoningDelta(delta.content_delta)]
        if isinstance(delta, ToolCallPartDelta) and isinstance(delta.args_delta, str) and delta.tool_call_id:
            return [ToolParamsDelta(delta.tool_call_id, delta.args_delta)]
    return []


async def _model_node(
    state: RunState, node: Any, run: Any, step: dict[str, list[dict[str, Any]]], *, first_in_run: bool
) -> None:
    model_name = state.runtime.model.config.id
    index = state.request_index
    if not first_in_run:  # the previous step's tool replies (incl. pydantic-ai's own retry prompts)
        for message in from_pydantic_ai_messages([node.request]):
            state.append(message)
    state.request_index += 1
    await state.emit(LLMRequestStart(index, model_name))
    started = time.monotonic()
    handler = StreamHandler(state)
    async with node.stream(run.ctx) as stream:
        async for event in stream:
            for converted in _convert_event(event):
                if isinstance(converted, ToolParamsDelta) and converted.call_id not in handler.generic:
                    continue
                await handler.handle(converted)
        response = stream.response
    step.clear()
    request_id = response.provider_response_id or f"pydantic-ai-{index}"
    state.request_ids.append(request_id)
    record = await state.bill_model_call(
        model_name, response.usage.input_tokens, response.usage.output_tokens
    )
    converted = from_pydantic_ai_messages([response])[0]
    state.append(dict(converted))
    state.consecutive_tool_rounds = state.consecutive_tool_rounds + 1 if converted.get("tool_calls") else 0
    state.finish_reason = str(response.finish_reason or "stop")
    await state.emit(
        LLMRequestEnd(
            index,
            model_name,
            request_id,
            state.finish_reason,
            time.monotonic() - started,
            answer_text=converted.get("content") or None,
            reasoning_text=converted.get("reasoning_content"),
            tool_calls=converted.get("tool_calls"),
            usages=[record],
        )
    )


async def _run_once(
    state: RunState,
    client: Any,
    complete: list[dict[str, Any]],
    produced: list[dict[str, Any]],
    limit: int,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], bool]:
    """One pydantic-ai run from the transcript ``complete``: the transcript and this call's new
    messages after it, and whether it ended early (a pause, an abort, the last allowed request)."""
    from pydantic_ai import Agent, UsageLimits
    from pydantic_ai.exceptions import UsageLimitExceeded
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    runtime = state.runtime
    state.messages = list(complete)
    state.assistant_messages = list(produced)
    step: dict[str, list[dict[str, Any]]] = {}
    withheld = False
    current: Any = None
    history, system = to_pydantic_ai_history(state.messages)
    model = OpenAIChatModel(runtime.model.config.request_model, provider=OpenAIProvider(openai_client=client))
    agent = Agent(model, instructions=system, tools=_tools(state, step), retries=3)
    settings = {k: v for k, v in runtime.llm_params.items() if k in ("temperature", "top_p")}

    def step_settings(ctx: Any) -> Any:  # evaluated per request: the tool_choice flip of spec §3.6.4
        return {**settings, "tool_choice": tool_choice(state)}

    first = True
    try:
        async with agent.iter(
            message_history=history,
            model_settings=step_settings,
            usage_limits=UsageLimits(request_limit=limit - state.request_index + 1),
        ) as run:
            current = run
            async for node in run:
                if Agent.is_model_request_node(node):
                    await _model_node(state, node, run, step, first_in_run=first)
                    first = False
                    if state.request_index >= limit:  # the last allowed request: run nothing more
                        withheld = True
                        break
                if runtime.is_stopping():
                    break
    except _Pause:
        pass
    except UsageLimitExceeded as exc:
        state.error = f"Iteration limit reached: {exc}"
    except ProviderGapError:
        raise
    except Exception as exc:
        state.error = error_text(exc)
    trim = withheld or runtime.is_stopping() or state.ask_pause is not None or state.child_pause is not None
    if trim and state.messages and state.messages[-1].get("role") == "assistant":
        assistant = state.messages[-1]
        assistant["tool_calls"] = [c for c in assistant.get("tool_calls") or [] if c["id"] in step]
        for call in assistant["tool_calls"]:
            for message in step[call["id"]]:
                state.append(message)
        if not assistant["tool_calls"]:
            del assistant["tool_calls"]
            assistant["content"] = assistant.get("content") or ""
    if trim:
        return state.messages, state.assistant_messages, True
    new_messages: list[Any] = []
    if current is not None:
        try:
            new_messages = list(current.new_messages())
        except Exception:  # a run that failed before its first message
            new_messages = []
    made = from_pydantic_ai_messages(new_messages)
    complete, produced = [*complete, *made], [*produced, *made]
    state.messages, state.assistant_messages = list(complete), list(produced)
    return complete, produced, False


async def run_pydantic_ai(input: AgentLoopInput, runtime: AgentLoopRuntime) -> AgentLoopResult:
    """Run the loop with pydantic-ai's ``Agent`` against the runtime model's OpenAI client."""
    try:
        import pydantic_ai  # noqa: F401
        from pydantic_ai.models.openai import OpenAIChatModel  # noqa: F401
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ProviderGapError(
            "pydanticAI provider needs pydantic-ai-slim[openai] (pip install 'fathom[agents-pydantic-ai]')"
        ) from exc
    _require(input, runtime)
    client = getattr(runtime.model, "client", None)
    if client is None:
        raise ProviderGapError("pydanticAI provider needs an OpenAI-compatible model (runtime.model.client)")
    state = await start_run(input, runtime)
    complete, produced = list(state.messages), list(state.assistant_messages)
    limit = request_limit(runtime)

    def append_feedback(message: dict[str, Any]) -> None:
        state.messages = [*state.messages, message]

    while not state.halted:
        complete, produced, trimmed = await _run_once(state, client, complete, produced, limit)
        if trimmed or state.error is not None or not await stop_gate_rejects(state, append_feedback):
            break
        feedback = state.messages[-1]
        complete, produced = [*complete, feedback], [*produced, feedback]
    state.messages, state.assistant_messages = complete, produced
    return await finish_run(state)
