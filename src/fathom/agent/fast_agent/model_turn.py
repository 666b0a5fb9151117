"""One model request of the fastAgent loop: stream it, emit events, bill it once (spec §3.6.4)."""

from __future__ import annotations

import time
from typing import Any

from fathom.agent.events import AnswerDeltaEvent, LLMRequestEnd, LLMRequestStart, ToolParamsEvent
from fathom.agent.fast_agent.prompt_mode import ToolTextFilter, parse_tool_blocks, to_prompt_messages
from fathom.agent.kernel import ModelTurn, RunState, StreamHandler
from fathom.agent.messages import request_message
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


class PromptStreamHandler(StreamHandler):
    """Prompt mode (no native function calling): tool blocks are filtered out of the streamed text and
    parsed into tool calls when the response ends."""

    native_tool_calls = False

    def __init__(self, state: RunState) -> None:
        super().__init__(state)
        self.filter = ToolTextFilter()

    async def text(self, text: str) -> None:
        await super().text(self.filter.feed(text))

    async def finish(self, result: CompletionResult) -> ModelTurn:
        rest = self.filter.finish()
        if rest:
            await self.state.emit(AnswerDeltaEvent(rest))
        calls = parse_tool_blocks(self.filter.blocks)
        for call in calls:
            await self.discovered(call["id"], call["function"]["name"])
            if call["id"] in self.generic and call["function"]["arguments"]:
                await self.state.emit(ToolParamsEvent(call["id"], call["function"]["arguments"]))
        content = self.filter.text.strip()
        return ModelTurn(content, result.reasoning, calls, result.finish_reason, result.request_id)


async def _replay(handler: StreamHandler, result: CompletionResult) -> None:
    """Non-streamed completion: emit the same events a stream would have."""
    if result.reasoning:
        await handler.handle(ReasoningDelta(result.reasoning))
    if result.content:
        await handler.handle(TextDelta(result.content))
    if handler.native_tool_calls:
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
    handler = PromptStreamHandler(state) if prompt_mode else StreamHandler(state)
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
    state.request_ids.append(result.request_id)
    record = await state.bill_model_call(model_name, result.usage.input_tokens, result.usage.output_tokens)
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
