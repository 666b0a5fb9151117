"""One model request of the fastAgent loop: stream it, emit events, bill it once (spec §3.6.4)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from fathom.agent.events import (
    AnswerDeltaEvent,
    LLMRequestEnd,
    LLMRequestStart,
    PlanStatus,
    ReasoningDeltaEvent,
    ToolCallEvent,
    ToolParamsEvent,
)
from fathom.agent.fast_agent.prompt_mode import ToolTextFilter, parse_tool_blocks, to_prompt_messages
from fathom.agent.fast_agent.state import RunState
from fathom.agent.messages import request_message
from fathom.agent.system_tools.plan import SET_PLAN
from fathom.agent.usage import AGENT_CALL_MODULE, AgentLoopUsage
from fathom.llm import (
    CompletionResult,
    FinishEvent,
    ReasoningDelta,
    TextDelta,
    ToolCallStart,
    ToolParamsDelta,
)
from fathom.tools import error_text

EMPTY_RESPONSE_ERROR = "LLM response is empty"


@dataclass
class ModelTurn:
    """What one request produced (``error`` set when it failed)."""

    content: str = ""
    reasoning: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str = "stop"
    request_id: str = ""
    error: str | None = None

    @property
    def message(self) -> dict[str, Any]:
        """The assistant message to append."""
        message: dict[str, Any] = {
            "role": "assistant",
            "content": self.content or ("" if not self.tool_calls else None),
        }
        if self.reasoning:
            message["reasoning_content"] = self.reasoning
        if self.tool_calls:
            message["tool_calls"] = self.tool_calls
        return message


class _StreamHandler:
    """Turns stream events into loop events; plan/ask calls get only their own events."""

    def __init__(self, state: RunState, prompt_mode: bool) -> None:
        self.state = state
        self.prompt_mode = prompt_mode
        self.filter = ToolTextFilter() if prompt_mode else None
        self.generic: set[str] = set()

    async def discovered(self, call_id: str, name: str) -> None:
        kind = self.state.catalog.kind(name)
        if kind == "plan":
            await self.state.emit(PlanStatus("generating" if name == SET_PLAN else "updating"))
        elif kind != "ask":
            self.generic.add(call_id)
            call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
            await self.state.emit(ToolCallEvent(call))

    async def handle(self, event: Any) -> None:
        if isinstance(event, TextDelta):
            text = self.filter.feed(event.text) if self.filter is not None else event.text
            if text:
                await self.state.emit(AnswerDeltaEvent(text))
        elif isinstance(event, ReasoningDelta):
            await self.state.emit(ReasoningDeltaEvent(event.text))
        elif isinstance(event, ToolCallStart):
            await self.discovered(event.call_id, event.name)
        elif isinstance(event, ToolParamsDelta) and event.call_id in self.generic and event.args_delta:
            await self.state.emit(ToolParamsEvent(event.call_id, event.args_delta))

    async def finish(self, result: CompletionResult) -> ModelTurn:
        calls = [call.to_openai() for call in result.tool_calls]
        content = result.content
        if self.filter is not None:
            rest = self.filter.finish()
            if rest:
                await self.state.emit(AnswerDeltaEvent(rest))
            content = self.filter.text.strip()
            calls = parse_tool_blocks(self.filter.blocks)
            for call in calls:
                await self.discovered(call["id"], call["function"]["name"])
                if call["id"] in self.generic and call["function"]["arguments"]:
                    await self.state.emit(ToolParamsEvent(call["id"], call["function"]["arguments"]))
        return ModelTurn(content, result.reasoning, calls, result.finish_reason, result.request_id)


async def _replay(handler: _StreamHandler, result: CompletionResult) -> None:
    """Non-streamed completion: emit the same events a stream would have."""
    if result.reasoning:
        await handler.handle(ReasoningDelta(result.reasoning))
    if result.content:
        await handler.handle(TextDelta(result.content))
    if not handler.prompt_mode:
        for index, call in enumerate(result.tool_calls):
            await handler.handle(ToolCallStart(call.id, call.name, index))
            await handler.handle(ToolParamsDelta(call.id, call.arguments))


async def call_model(state: RunState, tools: list[dict[str, Any]], tool_choice: str) -> ModelTurn:
    """Send the transcript (and ``tools`` unless empty) once; bill and report it."""
    runtime, model = state.runtime, state.runtime.model
    index = state.request_index
    state.request_index += 1
    model_name = model.config.id
    prompt_mode = not model.config.function_calling
    await state.emit(LLMRequestStart(index, model_name))
    started = time.monotonic()
    handler = _StreamHandler(state, prompt_mode)
    if prompt_mode:
        messages = to_prompt_messages([request_message(m) for m in state.messages], tools)
        send_tools: list[dict[str, Any]] | None = None
    else:
        messages = [request_message(m) for m in state.messages]
        send_tools = tools or None
    params = dict(runtime.llm_params)
    if send_tools:
        params.setdefault("parallel_tool_calls", True)
    choice = tool_choice if send_tools else None
    try:
        if runtime.stream:
            stream = model.stream(messages, tools=send_tools, tool_choice=choice, **params)
            async with stream:
                async for event in stream:
                    if isinstance(event, FinishEvent):
                        break
                    await handler.handle(event)
                    if runtime.is_stopping():
                        break
            result = stream.result
            if result is None:
                await state.emit(LLMRequestEnd(index, model_name, "", "close", time.monotonic() - started))
                return ModelTurn(finish_reason="close")
        else:
            result = await model.complete(messages, tools=send_tools, tool_choice=choice, **params)
            await _replay(handler, result)
    except Exception as exc:
        error = error_text(exc)
        await state.emit(
            LLMRequestEnd(index, model_name, "", "error", time.monotonic() - started, error=error)
        )
        return ModelTurn(finish_reason="error", error=error)
    turn = await handler.finish(result)
    usage = result.usage
    points = 0.0 if runtime.user_key else model.config.price(usage.input_tokens, usage.output_tokens)
    record = AgentLoopUsage(AGENT_CALL_MODULE, points, model_name, usage.input_tokens, usage.output_tokens)
    state.request_ids.append(result.request_id)
    await state.push([record])
    if not turn.content and not turn.tool_calls and not turn.reasoning:
        turn.error = EMPTY_RESPONSE_ERROR
    await state.emit(
        LLMRequestEnd(
            index,
            model_name,
            result.request_id,
            turn.finish_reason,
            time.monotonic() - started,
            answer_text=turn.content or None,
            reasoning_text=turn.reasoning or None,
            tool_calls=turn.tool_calls or None,
            usages=[record],
            error=turn.error,
        )
    )
    return turn
