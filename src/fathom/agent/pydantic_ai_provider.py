"""The ``pydanticAI`` provider: the same contract, with the loop delegated to pydantic-ai.

Optional: needs ``pydantic-ai-slim[openai]`` (extra ``agents-pydantic-ai``). pydantic-ai drives the
model ⇄ tools loop; Fathom keeps the tool contract (``run_tool`` replies, tool events, response
compression, usage pushed once per model call and billed tool) and the plan tools. What pydantic-ai
cannot do is listed in :data:`PYDANTIC_AI_GAPS`; asking for it gives a clear error result.
"""

from __future__ import annotations

import json
import time
from typing import Any

from fathom.agent.events import LLMRequestEnd, LLMRequestStart
from fathom.agent.fast_agent.model_turn import _StreamHandler
from fathom.agent.fast_agent.state import RunState
from fathom.agent.fast_agent.tool_runner import run_generic, run_plan
from fathom.agent.messages import initial_messages
from fathom.agent.pydantic_ai_bridge import from_pydantic_ai_messages, to_pydantic_ai_history
from fathom.agent.system_tools.catalog import build_run_catalog
from fathom.agent.types import AgentLoopInput, AgentLoopResult, AgentLoopRuntime
from fathom.agent.usage import AGENT_CALL_MODULE, AgentLoopUsage, sum_agent_call_usages
from fathom.llm import ReasoningDelta, TextDelta, ToolCallStart, ToolParamsDelta
from fathom.tools import error_text

PYDANTIC_AI_PROVIDER = "pydanticAI"

PYDANTIC_AI_GAPS: dict[str, str] = {
    "ask_pause": "pydanticAI provider cannot pause on ask_user (use fastAgent for ask and its resume)",
    "child_pause": "pydanticAI provider cannot pause on an interactive child tool (tool_child)",
    "tool_choice_flip": "pydantic-ai sends the same tool_choice on every request of a run",
    "withhold_tools_last_iteration": (
        "pydantic-ai stops with UsageLimitExceeded at the request limit instead of withholding tools"
    ),
    "context_checkpoint": "pydantic-ai has no hook for Fathom's history checkpoint compression",
    "unknown_tool_reply": "pydantic-ai answers an unknown tool name with its own retry prompt",
    "prompt_mode": "pydanticAI provider needs a model with native function calling",
    "stop_gate": "pydantic-ai ends the run when the model answers; there is no stop gate hook",
    "abort_between_tools": (
        "pydantic-ai schedules a response's tool calls together; an abort is seen between model requests"
    ),
}


class ProviderGapError(RuntimeError):
    """The run asked for a part of the contract this provider cannot honour."""


class _ChildPause(Exception):
    pass


def _require(input: AgentLoopInput, runtime: AgentLoopRuntime) -> None:
    if runtime.system_tools.ask:
        raise ProviderGapError(PYDANTIC_AI_GAPS["ask_pause"])
    if input.user_answer is not None:
        raise ProviderGapError(PYDANTIC_AI_GAPS["ask_pause"])
    if input.children_interactive_params:
        raise ProviderGapError(PYDANTIC_AI_GAPS["child_pause"])
    if runtime.stop_gate is not None:
        raise ProviderGapError(PYDANTIC_AI_GAPS["stop_gate"])
    if not runtime.model.config.function_calling:
        raise ProviderGapError(PYDANTIC_AI_GAPS["prompt_mode"])


def _tools(state: RunState) -> list[Any]:
    from pydantic_ai import RunContext, Tool

    from fathom.agent.pydantic_ai_bridge import from_pydantic_ai_messages as to_openai

    tools = []
    for schema in state.catalog.schemas:
        function = schema["function"]
        name = function["name"]
        kind = state.catalog.kind(name)

        async def call_tool(ctx: RunContext[Any], _name: str = name, _kind: str = kind, **kwargs: Any) -> str:
            call = {
                "id": ctx.tool_call_id or "",
                "type": "function",
                "function": {"name": _name, "arguments": json.dumps(kwargs, ensure_ascii=False)},
            }
            if _kind == "plan":
                outcome = await run_plan(state, call)
            else:
                outcome = await run_generic(state, call, [*state.messages, *to_openai(ctx.messages)])
                if state.child_pause is not None:
                    raise _ChildPause(PYDANTIC_AI_GAPS["child_pause"])
            return str(outcome.messages[0]["content"])

        tools.append(
            Tool.from_schema(
                call_tool,
                name=name,
                description=function.get("description") or "",
                json_schema=function.get("parameters") or {"type": "object", "properties": {}},
                takes_ctx=True,
                sequential=kind != "runtime",
            )
        )
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


async def _model_node(state: RunState, node: Any, run: Any, ids: dict[int, str]) -> None:
    model_name = state.runtime.model.config.id
    index = state.request_index
    state.request_index += 1
    await state.emit(LLMRequestStart(index, model_name))
    started = time.monotonic()
    handler = _StreamHandler(state, prompt_mode=False)
    async with node.stream(run.ctx) as stream:
        async for event in stream:
            for converted in _convert_event(event):
                if isinstance(converted, ToolParamsDelta) and converted.call_id not in handler.generic:
                    continue
                await handler.handle(converted)
        response = stream.response
    usage = response.usage
    config = state.runtime.model.config
    points = 0.0 if state.runtime.user_key else config.price(usage.input_tokens, usage.output_tokens)
    record = AgentLoopUsage(AGENT_CALL_MODULE, points, model_name, usage.input_tokens, usage.output_tokens)
    request_id = response.provider_response_id or f"pydantic-ai-{index}"
    state.request_ids.append(request_id)
    await state.push([record])
    converted = from_pydantic_ai_messages([response])[0]
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
    ids[index] = request_id


async def run_pydantic_ai(input: AgentLoopInput, runtime: AgentLoopRuntime) -> AgentLoopResult:
    """Run the loop with pydantic-ai's ``Agent`` against the runtime model's OpenAI client."""
    try:
        from pydantic_ai import Agent, UsageLimits
        from pydantic_ai.exceptions import UsageLimitExceeded
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ProviderGapError(
            "pydanticAI provider needs pydantic-ai-slim[openai] (pip install 'fathom[agents-pydantic-ai]')"
        ) from exc
    _require(input, runtime)
    client = getattr(runtime.model, "client", None)
    if client is None:
        raise ProviderGapError("pydanticAI provider needs an OpenAI-compatible model (runtime.model.client)")
    state = RunState(
        input=input,
        runtime=runtime,
        catalog=build_run_catalog(runtime.tools, runtime.system_tools),
        active_plan=dict(input.active_plan) if input.active_plan else None,
    )
    state.messages = initial_messages(input.messages, input.system_prompt)
    history, system = to_pydantic_ai_history(state.messages)
    model = OpenAIChatModel(runtime.model.config.request_model, provider=OpenAIProvider(openai_client=client))
    agent = Agent(model, instructions=system, tools=_tools(state), retries=3)
    settings: dict[str, Any] = {k: v for k, v in runtime.llm_params.items() if k in ("temperature", "top_p")}
    new_messages: list[Any] = []
    ids: dict[int, str] = {}
    current: Any = None
    try:
        async with agent.iter(
            message_history=history,
            model_settings=settings or None,  # type: ignore[arg-type]
            usage_limits=UsageLimits(request_limit=max(1, runtime.max_run_agent_times)),
        ) as run:
            current = run
            async for node in run:
                if Agent.is_model_request_node(node):
                    await _model_node(state, node, run, ids)
                if runtime.is_stopping():
                    break
    except _ChildPause as exc:
        state.error = str(exc)
    except UsageLimitExceeded as exc:
        state.error = f"Iteration limit reached: {exc}"
    except ProviderGapError:
        raise
    except Exception as exc:
        state.error = error_text(exc)
    if current is not None:
        try:
            new_messages = list(current.new_messages())
        except Exception:  # a run that failed before its first message
            new_messages = []
    produced = from_pydantic_ai_messages(new_messages)
    status = "aborted" if runtime.is_stopping() else "error" if state.error else "done"
    return AgentLoopResult(
        status=status,  # type: ignore[arg-type]
        complete_messages=[*state.messages, *produced],
        assistant_messages=produced,
        request_ids=state.request_ids,
        usages=[sum_agent_call_usages(state.usages, runtime.model.config.id)],
        finish_reason="error" if state.error else state.finish_reason,
        active_plan=state.active_plan,
        error=state.error,
    )
