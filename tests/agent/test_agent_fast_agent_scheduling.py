"""fastAgent tool scheduling (spec §3.6.5): batches, serial system tools, call order, no streaming."""

from __future__ import annotations

import asyncio
from typing import Any

from agent_helpers import Recorder, make_runtime

from fathom.agent import AgentLoopInput, SystemToolsConfig, run_agent_loop
from fathom.testing import ScriptedOpenAIServer, text_turn, tool_call_turn
from fathom.tools import ToolDefinition


def user(text: str) -> AgentLoopInput:
    return AgentLoopInput(messages=[{"role": "user", "content": text}])


class Gauge:
    """Counts how many tool bodies run at once."""

    def __init__(self) -> None:
        self.active = 0
        self.peak = 0
        self.order: list[str] = []

    async def enter(self, name: str, delay_turns: int) -> str:
        self.active += 1
        self.peak = max(self.peak, self.active)
        for _ in range(delay_turns):
            await asyncio.sleep(0)
        self.active -= 1
        self.order.append(name)
        return name


async def test_runtime_tools_run_in_batches_and_results_keep_call_order(
    server: ScriptedOpenAIServer, recorder: Recorder
) -> None:
    gauge = Gauge()

    def tool(name: str, turns: int) -> ToolDefinition:
        return ToolDefinition(name=name, execute=lambda ctx: gauge.enter(name, turns), description=name)

    tools = [tool("slow", 20), tool("mid", 10), tool("fast", 0)]
    server.set_script([tool_call_turn([("slow", {}), ("mid", {}), ("fast", {})]), text_turn("ok")])
    runtime = make_runtime(server, recorder, tools=tools, batch_tool_size=2)
    result = await run_agent_loop(None, user("go"), runtime)
    assert result.status == "done"
    assert gauge.peak == 2  # slow+mid together, then fast alone
    assert gauge.order == ["mid", "slow", "fast"]  # finishing order differs...
    contents = [m["content"] for m in result.complete_messages if m["role"] == "tool"]
    assert contents == ["slow", "mid", "fast"]  # ...the transcript keeps call order


async def test_system_tools_break_batches_and_run_serially(
    server: ScriptedOpenAIServer, recorder: Recorder
) -> None:
    gauge = Gauge()
    tools = [
        ToolDefinition(name=n, execute=lambda ctx, n=n: gauge.enter(n, 5), description=n) for n in "abcd"
    ]
    server.set_script(
        [
            tool_call_turn(
                [("a", {}), ("b", {}), ("set_plan", {"name": "p", "steps": ["s"]}), ("c", {}), ("d", {})]
            ),
            text_turn("ok"),
        ]
    )
    runtime = make_runtime(server, recorder, tools=tools, system_tools=SystemToolsConfig(plan=True))
    result = await run_agent_loop(None, user("go"), runtime)
    assert result.status == "done"
    assert gauge.peak == 2
    assert set(gauge.order[:2]) == {"a", "b"} and set(gauge.order[2:]) == {"c", "d"}
    tool_ids = [m["tool_call_id"] for m in result.complete_messages if m["role"] == "tool"]
    assert tool_ids == [f"call_1_{i}" for i in range(5)]


async def test_tool_stop_flag_ends_the_run_without_another_model_call(
    server: ScriptedOpenAIServer, recorder: Recorder
) -> None:
    stopper = ToolDefinition(name="stop_now", execute=lambda ctx: {"response": "stopped", "stop": True})
    server.set_script([tool_call_turn([("stop_now", {})])])
    result = await run_agent_loop(None, user("x"), make_runtime(server, recorder, tools=[stopper]))
    assert result.status == "done" and len(server.chat_requests) == 1
    assert result.complete_messages[-1] == {"role": "tool", "tool_call_id": "call_1_0", "content": "stopped"}


async def test_non_streaming_requests_emit_the_same_events(server: ScriptedOpenAIServer) -> None:
    add = ToolDefinition(name="add", execute=lambda ctx: "2", description="add")
    kinds: dict[bool, list[str]] = {}
    for stream in (True, False):
        recorder = Recorder()
        server.set_script([tool_call_turn([("add", {"a": 1})], reasoning="hm"), text_turn("two")])
        result = await run_agent_loop(
            None, user("1+1"), make_runtime(server, recorder, tools=[add], stream=stream)
        )
        assert result.status == "done" and result.answer_text == "two"
        kinds[stream] = [t for i, t in enumerate(recorder.types) if i == 0 or recorder.types[i - 1] != t]
    assert kinds[True] == kinds[False]
    assert [bool(r.get("stream")) for r in server.chat_requests] == [True, True, False, False]


async def test_empty_model_response_is_an_error(server: ScriptedOpenAIServer, recorder: Recorder) -> None:
    server.set_script([text_turn("")])
    result = await run_agent_loop(None, user("x"), make_runtime(server, recorder))
    assert (result.status, result.error) == ("error", "LLM response is empty")
    assert recorder.of("llm_request_end")[0].error == "LLM response is empty"


async def test_user_key_means_zero_points(server: ScriptedOpenAIServer, recorder: Recorder) -> None:
    server.set_script([text_turn("hi", usage=(1000, 1000))])
    runtime = make_runtime(
        server, recorder, user_key=True, model_options={"input_price": 1, "output_price": 1}
    )
    result = await run_agent_loop(None, user("x"), runtime)
    assert [(u.input_tokens, u.total_points) for u in result.usages] == [(1000, 0.0)]


async def test_tool_params_fragments_rebuild_the_arguments(
    server: ScriptedOpenAIServer, recorder: Recorder
) -> None:
    echo = ToolDefinition(name="echo", execute=lambda ctx: "x", description="echo")
    args = '{"text": "a long argument that is split in fragments"}'
    server.set_script([tool_call_turn([("echo", args)], arg_fragments=5), text_turn("ok")])
    await run_agent_loop(None, user("x"), make_runtime(server, recorder, tools=[echo]))
    params: list[Any] = recorder.of("tool_params")
    assert len(params) == 5 and "".join(p.args_delta for p in params) == args
    assert {p.call_id for p in params} == {"call_1_0"}
