"""run_agent_loop's registry and error conversion (spec §3.4.4, §3.4.6), and the wire shapes."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from agent_helpers import Recorder, make_runtime

from fathom.agent import (
    EVENT_TYPES,
    AgentLoopEvent,
    AgentLoopInput,
    AgentLoopResult,
    AgentLoopRuntime,
    AgentLoopUsage,
    LLMRequestEnd,
    ToolParamsEvent,
    UnknownProviderError,
    get_provider,
    register_provider,
    registered_providers,
    run_agent_loop,
)
from fathom.testing import ScriptedOpenAIServer


def test_default_provider_and_no_aliases() -> None:
    assert get_provider(None) is get_provider("fastAgent")
    assert registered_providers()[:2] == ["fastAgent", "pydanticAI"]
    for name in ("default", "pi", "FastAgent"):
        with pytest.raises(UnknownProviderError, match=f"^Unknown agent loop provider: {name}$"):
            get_provider(name)


async def test_unknown_provider_raises_before_running(
    server: ScriptedOpenAIServer, recorder: Recorder
) -> None:
    with pytest.raises(UnknownProviderError, match="Unknown agent loop provider: nope"):
        await run_agent_loop("nope", AgentLoopInput(), make_runtime(server, recorder))


async def test_escaped_exception_becomes_an_error_result_keeping_input(
    server: ScriptedOpenAIServer, recorder: Recorder
) -> None:
    async def broken(input: AgentLoopInput, runtime: AgentLoopRuntime) -> AgentLoopResult:
        assert runtime.usage_push is not None
        await runtime.usage_push([AgentLoopUsage("account_usage:agent_call", 1.5)])
        raise RuntimeError("provider exploded")

    register_provider("testBroken", broken)
    plan = {"name": "p", "steps": []}
    state = {"opaque": 1}
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    result = await run_agent_loop(
        "testBroken",
        AgentLoopInput(messages=messages, active_plan=plan, provider_state=state),
        make_runtime(server, recorder),
    )
    assert result.to_wire() == {
        "status": "error",
        "error": "provider exploded",
        "completeMessages": messages,
        "assistantMessages": [],
        "requestIds": [],
        "usages": [{"moduleName": "account_usage:agent_call", "totalPoints": 1.5}],
        "finishReason": "error",
        "activePlan": plan,
        "providerState": state,
    }
    assert len(recorder.pushes) == 1  # forwarded once, collected once


async def test_result_usages_fall_back_to_the_providers_when_nothing_was_pushed(
    server: ScriptedOpenAIServer, recorder: Recorder
) -> None:
    async def quiet(input: AgentLoopInput, runtime: AgentLoopRuntime) -> AgentLoopResult:
        return AgentLoopResult("done", [], [], [], usages=[{"moduleName": "m", "totalPoints": 2}, None])  # type: ignore[list-item]

    register_provider("testQuiet", quiet)
    result = await run_agent_loop("testQuiet", AgentLoopInput(), make_runtime(server, recorder))
    assert [u.to_wire() for u in result.usages] == [{"moduleName": "m", "totalPoints": 2.0}]


def test_every_event_type_is_in_the_union() -> None:
    names = {cls.__dataclass_fields__["type"].default for cls in AgentLoopEvent.__args__}  # type: ignore[attr-defined]
    assert names == set(EVENT_TYPES)
    assert {
        "llm_request_start",
        "llm_request_end",
        "reasoning_delta",
        "answer_delta",
        "tool_call",
        "tool_params",
        "tool_run_start",
        "tool_run_end",
        "after_message_compress",
        "plan_status",
        "plan_operation",
        "ask_start",
        "ask",
        "ask_resume",
    } <= names


def test_events_serialise_with_fastgpt_spelling() -> None:
    assert ToolParamsEvent("c1", '{"a"').to_wire() == {
        "callId": "c1",
        "argsDelta": '{"a"',
        "type": "tool_params",
    }
    end = LLMRequestEnd(0, "m", "r", "stop", 0.5, usages=[AgentLoopUsage("x", 1, input_tokens=3)])
    assert end.to_wire()["usages"] == [{"moduleName": "x", "totalPoints": 1, "inputTokens": 3}]
    assert end.to_wire()["requestIndex"] == 0


def test_runtime_defaults_match_the_spec(server: ScriptedOpenAIServer) -> None:
    runtime = AgentLoopRuntime(model=server.chat_model())
    assert (runtime.max_run_agent_times, runtime.batch_tool_size, runtime.stream) == (100, 5, True)
    assert dataclasses.replace(runtime, signal=None).is_stopping() is False


def test_messages_accept_sdk_models() -> None:
    from openai.types.chat import ChatCompletionUserMessageParam

    from fathom.agent.messages import initial_messages

    message: Any = ChatCompletionUserMessageParam(role="user", content="hi")
    assert initial_messages([{"role": "system", "content": "x"}, message], "S") == [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "hi"},
    ]
