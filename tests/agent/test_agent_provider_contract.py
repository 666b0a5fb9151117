"""The provider contract (spec §2.3, §3.4–§3.13, §10 items 2–5), run against every registered provider
through the real ``openai`` client and the scripted model server."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from typing import Any

import pytest
from agent_helpers import Recorder, all_providers, make_runtime

from fathom.agent import (
    AGENT_CALL_MODULE,
    COMPRESS_MESSAGES_MODULE,
    AgentLoopInput,
    DatasetSearchToolConfig,
    ReadFileToolConfig,
    SandboxToolConfig,
    SystemToolsConfig,
    provider_gaps,
    run_agent_loop,
)
from fathom.testing import ScriptedOpenAIServer, text_turn, tool_call_turn
from fathom.tools import ToolDefinition, ToolResult, function_tool


@pytest.fixture(params=all_providers())
def provider(request: pytest.FixtureRequest) -> str:
    name = str(request.param)
    if name == "pydanticAI" and importlib.util.find_spec("pydantic_ai") is None:
        pytest.skip(
            "pydanticAI provider: pydantic-ai-slim not installed (pip install '.[agents-pydantic-ai]')"
        )
    return name


def require(provider: str, capability: str) -> None:
    gap = provider_gaps(provider).get(capability)
    if gap:
        pytest.skip(f"{provider} declares a contract gap ({capability}): {gap}")


def user(text: str) -> AgentLoopInput:
    return AgentLoopInput(messages=[{"role": "user", "content": text}])


@function_tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@function_tool
def boom() -> str:
    """Always fails."""
    raise ValueError("boom")


strict = ToolDefinition(
    name="strict",
    description="Needs an integer.",
    parameters={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    execute=lambda ctx: "ok",
)


def tool_messages(messages: list[dict[str, Any]]) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in messages if m.get("role") == "tool"}


async def test_run_tool_paths_reply_and_still_emit_tool_run_end(
    provider: str, server: ScriptedOpenAIServer, recorder: Recorder
) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("add", {"a": 1, "b": 2}),
        ("strict", {"n": "x"}),
        ("boom", {}),
    ]
    expected = {"call_1_0": "3", "call_1_2": "Tool error: boom"}
    if not provider_gaps(provider).get("unknown_tool_reply"):
        calls.append(("nope", {}))
        expected["call_1_3"] = "Call tool not found: nope"
    server.set_script([tool_call_turn(calls), text_turn("done")])
    runtime = make_runtime(server, recorder, tools=[add, strict, boom])
    result = await run_agent_loop(provider, user("go"), runtime)
    assert result.status == "done", result.error
    replies = tool_messages(result.complete_messages)
    for call_id, text in expected.items():
        assert replies[call_id] == text
    assert replies["call_1_1"].startswith("Tool input validation failed")
    ends = recorder.of("tool_run_end")
    assert sorted(e.call["id"] for e in ends) == sorted(replies)
    assert all(e.response == replies[e.call["id"]] for e in ends)
    assert {e.call["id"]: e.error_message for e in ends}["call_1_2"] == "Tool error: boom"
    assert server.chat_requests[1]["messages"][-len(calls) :] == [
        {"role": "tool", "tool_call_id": f"call_1_{i}", "content": replies[f"call_1_{i}"]}
        for i in range(len(calls))
    ]


async def test_usage_pushed_exactly_once_per_model_call_and_billed_tool(
    provider: str, server: ScriptedOpenAIServer, recorder: Recorder
) -> None:
    def billed(ctx: Any) -> ToolResult:
        return ToolResult(response="billed", usages=[{"moduleName": "tool:billed", "totalPoints": 2.5}])

    billed_tool = ToolDefinition(name="billed", execute=billed, description="Costs points.")
    server.set_script(
        [
            tool_call_turn([("billed", {}), ("add", {"a": 1, "b": 1})], usage=(1000, 500)),
            text_turn("ok", usage=(2000, 100)),
        ]
    )
    runtime = make_runtime(
        server, recorder, tools=[billed_tool, add], model_options={"input_price": 1.0, "output_price": 2.0}
    )
    result = await run_agent_loop(provider, user("bill"), runtime)
    assert result.status == "done", result.error
    assert sorted(recorder.pushed_modules()) == sorted(
        [[AGENT_CALL_MODULE], ["tool:billed"], [AGENT_CALL_MODULE]]
    )
    calls = [push[0] for push in recorder.pushes if push[0].module_name == AGENT_CALL_MODULE]
    assert [(u.input_tokens, u.output_tokens, u.total_points) for u in calls] == [
        (1000, 500, 2.0),
        (2000, 100, 2.2),
    ]
    assert [u.module_name for u in result.usages] == [u.module_name for p in recorder.pushes for u in p]


async def test_tool_choice_becomes_none_after_the_sixth_consecutive_tool_response(
    provider: str, server: ScriptedOpenAIServer, recorder: Recorder
) -> None:
    require(provider, "tool_choice_flip")
    server.set_script([tool_call_turn([("add", {"a": i, "b": 1})]) for i in range(6)] + [text_turn("end")])
    result = await run_agent_loop(provider, user("loop"), make_runtime(server, recorder, tools=[add]))
    assert result.status == "done"
    assert [r.get("tool_choice") for r in server.chat_requests] == ["auto"] * 6 + ["none"]


async def test_last_allowed_iteration_withholds_tools(
    provider: str, server: ScriptedOpenAIServer, recorder: Recorder
) -> None:
    require(provider, "withhold_tools_last_iteration")
    server.set_script(
        [tool_call_turn([("add", {"a": 1, "b": 1})])] * 2 + [tool_call_turn([("add", {"a": 9, "b": 9})])]
    )
    runtime = make_runtime(server, recorder, tools=[add], max_run_agent_times=3)
    result = await run_agent_loop(provider, user("loop"), runtime)
    assert result.status == "done"
    assert [bool(r.get("tools")) for r in server.chat_requests] == [True, True, False]
    assert len(recorder.of("tool_run_end")) == 2  # the third response's call was never run
    assert "tool_calls" not in result.complete_messages[-1]


async def test_plan_tools_reply_texts_atomic_failure_and_only_plan_events(
    provider: str, server: ScriptedOpenAIServer, recorder: Recorder
) -> None:
    server.set_script(
        [
            tool_call_turn([("set_plan", {"name": "Trip", "steps": ["Book", "Pack"]})]),
            tool_call_turn(
                [
                    (
                        "update_plan",
                        {"updates": [{"id": "step_1", "status": "done"}, {"id": "step_9", "status": "done"}]},
                    )
                ]
            ),
            tool_call_turn(
                [
                    (
                        "update_plan",
                        {"updates": [{"id": "step_1", "status": "done", "note": "ok"}], "add_steps": ["Go"]},
                    )
                ]
            ),
            text_turn("planned"),
        ]
    )
    runtime = make_runtime(server, recorder, system_tools=SystemToolsConfig(plan=True))
    result = await run_agent_loop(provider, user("plan"), runtime)
    assert result.status == "done", result.error
    replies = list(tool_messages(result.complete_messages).values())
    assert replies[0] == (
        'Set active plan "Trip" with 2 step(s).\n'
        "Plan progress: 0 done, 0 in progress, 2 pending, 0 blocked, 0 skipped.\n"
        "Current plan steps:\n- step_1: Book | status=pending\n- step_2: Pack | status=pending"
    )
    assert replies[1] == "Unknown plan step: step_9"
    assert replies[2] == (
        'Updated 1 plan step(s). Added plan step(s): "Go".\n'
        "Plan progress: 1 done, 0 in progress, 2 pending, 0 blocked, 0 skipped.\n"
        "Current plan steps:\n- step_1: Book | status=done | note=ok\n"
        "- step_2: Pack | status=pending\n- step_3: Go | status=pending"
    )
    assert [e.status for e in recorder.of("plan_status")] == ["generating", "updating", "updating"]
    ops = recorder.of("plan_operation")
    assert [(o.operation, o.success, o.plan is not None) for o in ops] == [
        ("set_plan", True, True),
        ("update_steps", False, False),
        ("update_steps", True, True),
    ]
    assert not {"tool_call", "tool_params", "tool_run_start", "tool_run_end"} & set(recorder.types)
    assert recorder.pushed_modules() == [[AGENT_CALL_MODULE]] * 4
    assert result.active_plan is not None
    assert [s["status"] for s in result.active_plan["steps"]] == ["done", "pending", "pending"]


VALID_ASK = {
    "reason": "Need a colour",
    "blockerType": "user_choice",
    "questions": [
        {
            "question": "Which colour?",
            "options": [{"summary": "Blue", "value": "blue"}, {"summary": "Red", "value": "red"}],
        }
    ],
}


async def test_ask_parse_error_pause_and_resume_round_trip(
    provider: str, server: ScriptedOpenAIServer, recorder: Recorder
) -> None:
    require(provider, "ask_pause")
    runs: list[int] = []

    @function_tool
    def counter() -> str:
        """Counts runs."""
        runs.append(1)
        return "counted"

    server.set_script(
        [
            tool_call_turn([("ask_user", "{not json"), ("ask_user", {**VALID_ASK, "questions": []})]),
            tool_call_turn([("counter", {}), ("ask_user", VALID_ASK)]),
            text_turn("painted blue"),
        ]
    )
    runtime = make_runtime(server, recorder, tools=[counter], system_tools=SystemToolsConfig(ask=True))
    paused = await run_agent_loop(provider, user("paint"), runtime)
    assert paused.status == "paused"
    assert paused.pause is not None and paused.pause.type == "ask"
    assert paused.pause.ask_id == "call_2_1"
    assert len(server.chat_requests) == 2
    assert paused.pause.to_wire()["askId"] == "call_2_1"
    if "invalid_json_reply" not in provider_gaps(provider):
        assert tool_messages(paused.complete_messages)["call_1_0"] == "Ask tool arguments are not valid JSON."
    else:
        assert "call_1_0" in tool_messages(paused.complete_messages)  # answered by the framework
    assert tool_messages(paused.complete_messages)["call_1_1"] == (
        "Invalid ask_user arguments: questions must contain 1 to 3 items."
    )
    pending = (paused.provider_state or {})["pendingMainContext"]
    assert pending["askToolCallId"] == "call_2_1"
    assert [c["id"] for c in pending["messages"][-2]["tool_calls"]] == ["call_2_0", "call_2_1"]
    assert recorder.types[-1] == "ask" and "ask_start" in recorder.types
    assert recorder.of("ask_start")[0].ask["questions"][0]["question"] == "Which colour?"
    assert runs == [1]

    resumed_recorder = Recorder()
    resumed = await run_agent_loop(
        provider,
        AgentLoopInput(
            messages=paused.complete_messages, provider_state=paused.provider_state, user_answer='["blue"]'
        ),
        make_runtime(server, resumed_recorder, tools=[counter], system_tools=SystemToolsConfig(ask=True)),
    )
    assert resumed.status == "done" and resumed.answer_text == "painted blue"
    assert resumed_recorder.types[0] == "ask_resume"
    sent = server.chat_requests[2]["messages"]
    assert sent[-1] == {"role": "tool", "tool_call_id": "call_2_1", "content": "Q1: Which colour?\nA1: blue"}
    assert sent[-2] == {"role": "tool", "tool_call_id": "call_2_0", "content": "counted"}
    assert runs == [1]  # resume never re-runs a tool that already ran


@pytest.mark.parametrize("gap", ["prompt_tool_calling"])
async def test_declared_gaps_fail_with_a_clear_error(
    provider: str, server: ScriptedOpenAIServer, recorder: Recorder, gap: str
) -> None:
    gaps = provider_gaps(provider)
    if gap not in gaps:
        pytest.skip(f"{provider} honours {gap}")
    options: dict[str, Any] = {"model_options": {"function_calling": False}}
    result = await run_agent_loop(provider, user("hi"), make_runtime(server, recorder, **options))
    assert (result.status, result.error) == ("error", gaps[gap])
    assert result.complete_messages == [{"role": "user", "content": "hi"}]
    assert server.chat_requests == []


async def test_child_tool_pause_and_resume_replaces_the_tool_message(
    provider: str, server: ScriptedOpenAIServer, recorder: Recorder
) -> None:
    require(provider, "child_pause")
    child_runs: list[Any] = []
    interactive_runs: list[Any] = []
    question = {"type": "userSelect", "params": {"options": ["a", "b"]}}

    def child(ctx: Any) -> ToolResult:
        child_runs.append(ctx.call.id)
        return ToolResult(response="waiting for the child", interactive=question)

    child_tool = ToolDefinition(name="child_app", execute=child, description="A child app.")

    async def execute_interactive(call: dict[str, Any], messages: Any, params: dict[str, Any]) -> ToolResult:
        interactive_runs.append((call["function"]["name"], params["childrenResponse"]))
        return ToolResult(response="child chose a")

    server.set_script([tool_call_turn([("child_app", {})]), text_turn("finished")])
    runtime = make_runtime(server, recorder, tools=[child_tool], execute_interactive_tool=execute_interactive)
    paused = await run_agent_loop(provider, user("run child"), runtime)
    assert paused.status == "paused" and paused.pause is not None
    assert paused.pause.to_wire() == {
        "type": "tool_child",
        "childrenResponse": question,
        "toolCallId": "call_1_0",
    }
    params = {"toolParams": {"toolCallId": "call_1_0"}, "childrenResponse": {"answer": "a"}}
    resumed = await run_agent_loop(
        provider,
        AgentLoopInput(messages=paused.complete_messages, children_interactive_params=params),
        make_runtime(server, Recorder(), tools=[child_tool], execute_interactive_tool=execute_interactive),
    )
    assert resumed.status == "done" and resumed.answer_text == "finished"
    assert child_runs == ["call_1_0"] and interactive_runs == [("child_app", {"answer": "a"})]
    sent = server.chat_requests[1]["messages"]
    assert [m for m in sent if m["role"] == "tool"] == [
        {"role": "tool", "tool_call_id": "call_1_0", "content": "child chose a"}
    ]


@pytest.mark.parametrize(("max_context", "compressed"), [(8000, True), (128000, False)])
async def test_history_checkpoint_at_eighty_percent_of_the_window(
    provider: str, server: ScriptedOpenAIServer, recorder: Recorder, max_context: int, compressed: bool
) -> None:
    require(provider, "context_checkpoint")
    long_text = "alpha " * 7000  # about 7000 tokens: over 6400 (8000 window), far under 102400 (128000)
    script = [text_turn("```markdown\nGoal: alpha\n```")] if compressed else []
    server.set_script([*script, text_turn("answer")])
    runtime = make_runtime(server, recorder, model_options={"max_context": max_context, "max_response": 1000})
    result = await run_agent_loop(
        provider,
        AgentLoopInput(
            messages=[{"role": "user", "content": long_text}],
            system_prompt="Be brief.",
            active_plan={"name": "p", "steps": []},
        ),
        runtime,
    )
    assert result.status == "done"
    if not compressed:
        assert len(server.chat_requests) == 1 and recorder.pushed_modules() == [[AGENT_CALL_MODULE]]
        return
    assert recorder.pushed_modules() == [[COMPRESS_MESSAGES_MODULE], [AGENT_CALL_MODULE]]
    assert "<histories>" in server.chat_requests[0]["messages"][1]["content"]
    checkpoint = (
        '<active_plan>\n{\n  "name": "p",\n  "steps": []\n}\n</active_plan>\n'
        "<context_checkpoint>\nGoal: alpha\n</context_checkpoint>"
    )
    assert server.chat_requests[1]["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": checkpoint},
    ]
    assert result.context_checkpoint == checkpoint
    assert recorder.types[:2] == ["after_message_compress", "llm_request_start"]
    assert len(result.request_ids) == 2


async def test_events_arrive_in_order_for_one_tool_round(
    provider: str, server: ScriptedOpenAIServer, recorder: Recorder
) -> None:
    server.set_script([tool_call_turn([("add", {"a": 2, "b": 2})], reasoning="think"), text_turn("four")])
    result = await run_agent_loop(provider, user("2+2"), make_runtime(server, recorder, tools=[add]))
    assert result.status == "done"
    kinds = [t for i, t in enumerate(recorder.types) if i == 0 or recorder.types[i - 1] != t]
    assert kinds[:2] == ["llm_request_start", "reasoning_delta"] or kinds[:2] == [
        "llm_request_start",
        "tool_call",
    ]
    assert kinds[-7:] == [
        "tool_params",
        "llm_request_end",
        "tool_run_start",
        "tool_run_end",
        "llm_request_start",
        "answer_delta",
        "llm_request_end",
    ]
    params = "".join(e.args_delta for e in recorder.of("tool_params"))
    assert json.loads(params) == {"a": 2, "b": 2}
    ends = recorder.of("llm_request_end")
    assert [e.request_index for e in ends] == [0, 1] and ends[1].answer_text == "four"


async def test_missing_system_executors_reply_not_available(
    provider: str, server: ScriptedOpenAIServer, recorder: Recorder
) -> None:
    server.set_script(
        [
            tool_call_turn(
                [
                    ("sandbox_ls", {}),
                    ("read_files", {"urls": ["https://x/a.pdf"]}),
                    ("dataset_search", {"query": "q"}),
                ]
            ),
            text_turn("sorry"),
        ]
    )
    system = SystemToolsConfig(
        sandbox=SandboxToolConfig(client=None),
        read_file=ReadFileToolConfig(execute=None),
        dataset_search=DatasetSearchToolConfig(execute=None),
    )
    result = await run_agent_loop(provider, user("x"), make_runtime(server, recorder, system_tools=system))
    assert list(tool_messages(result.complete_messages).values()) == [
        "Sandbox executor is not available.",
        "Read file executor is not available.",
        "Dataset search executor is not available.",
    ]
    assert [e.error_message for e in recorder.of("tool_run_end")] == [
        "Sandbox executor is not available.",
        "Read file executor is not available.",
        "Dataset search executor is not available.",
    ]


async def test_system_tools_use_runtime_executors_and_collisions_are_removed(
    provider: str, server: ScriptedOpenAIServer, recorder: Recorder
) -> None:
    seen: list[Any] = []

    class Sandbox:
        async def ls(self, path: str = ".") -> str:
            seen.append(("ls", path))
            return "a.txt"

    async def search(args: dict[str, Any], call: dict[str, Any]) -> str:
        seen.append(("search", args["query"]))
        return "chunk"

    impostor = ToolDefinition(name="dataset_search", execute=lambda ctx: "impostor", description="x")
    server.set_script(
        [
            tool_call_turn([("sandbox_ls", {"path": "/w"}), ("dataset_search", {"query": " q "})]),
            text_turn("ok"),
        ]
    )
    system = SystemToolsConfig(
        sandbox=SandboxToolConfig(client=Sandbox()),
        dataset_search=DatasetSearchToolConfig(
            execute=search, current_input_files=["https://h/f.pdf", "local/f.pdf"]
        ),
    )
    runtime = make_runtime(server, recorder, tools=[impostor, add], system_tools=system)
    result = await run_agent_loop(provider, user("x"), runtime)
    assert result.status == "done"
    names = server.requests_to("/chat/completions")[0].tool_names
    assert names[0] == "add" and names.count("dataset_search") == 1 and names[-1] == "dataset_search"
    assert seen == [("ls", "/w"), ("search", ["q", "https://h/f.pdf"])]
    assert list(tool_messages(result.complete_messages).values()) == ["a.txt", "chunk"]


async def test_abort_stops_scheduling_and_returns_aborted(
    provider: str, server: ScriptedOpenAIServer, recorder: Recorder
) -> None:
    signal = asyncio.Event()
    ran: list[str] = []

    def stopper(ctx: Any) -> str:
        ran.append(ctx.call.id)
        signal.set()
        return "stopping"

    stop_tool = ToolDefinition(name="stopper", execute=stopper, description="Stops the run.")
    server.set_script([tool_call_turn([("stopper", {}), ("stopper", {})])])
    runtime = make_runtime(server, recorder, tools=[stop_tool], signal=signal, batch_tool_size=1)
    result = await run_agent_loop(provider, user("x"), runtime)
    assert result.status == "aborted"
    assert ran == ["call_1_0"]
    assert [c["id"] for c in result.complete_messages[1]["tool_calls"]] == ["call_1_0"]


async def test_prompt_tool_calling_for_models_without_function_calling(
    provider: str, server: ScriptedOpenAIServer, recorder: Recorder
) -> None:
    require(provider, "prompt_tool_calling")
    server.set_script(
        [
            text_turn('Adding.\n<tool_call>{"name": "add", "arguments": {"a": 1, "b": 2}}</tool_call>'),
            text_turn("It is 3."),
        ]
    )
    runtime = make_runtime(server, recorder, tools=[add], model_options={"function_calling": False})
    result = await run_agent_loop(provider, user("1+2?"), runtime)
    assert result.status == "done" and result.answer_text == "It is 3."
    first, second = server.chat_requests
    assert "tools" not in first and "<tools>" in first["messages"][0]["content"]
    assert '<tool_response name="add"' in second["messages"][-1]["content"]
    assert "3\n</tool_response>" in second["messages"][-1]["content"]
    streamed = "".join(e.text for e in recorder.of("answer_delta"))
    assert streamed == "Adding.\nIt is 3."
    assert [e.type for e in recorder.events if e.type.startswith("tool_")] == [
        "tool_call",
        "tool_params",
        "tool_run_start",
        "tool_run_end",
    ]
    assistant = result.complete_messages[1]
    assert assistant["content"] == "Adding." and assistant["tool_calls"][0]["function"]["name"] == "add"


async def test_plain_openai_tool_schemas_run_through_the_runtime_executor(
    provider: str, server: ScriptedOpenAIServer, recorder: Recorder
) -> None:
    schema = {
        "type": "function",
        "function": {"name": "lookup", "description": "Look up.", "parameters": {"type": "object"}},
    }
    seen: list[tuple[str, int]] = []

    async def execute_tool(call: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
        seen.append((call["function"]["name"], len(messages)))
        return {"response": "found", "usages": [{"moduleName": "tool:lookup", "totalPoints": 1}]}

    server.set_script([tool_call_turn([("lookup", {"q": "x"})]), text_turn("ok")])
    runtime = make_runtime(server, recorder, tools=[schema], execute_tool=execute_tool)
    result = await run_agent_loop(provider, user("look"), runtime)
    assert result.status == "done"
    sent = server.chat_requests[0]["tools"]
    assert [(t["function"]["name"], t["function"]["description"]) for t in sent] == [("lookup", "Look up.")]
    assert seen and seen[0][0] == "lookup"
    assert tool_messages(result.complete_messages) == {"call_1_0": "found"}
    assert ["tool:lookup"] in recorder.pushed_modules()


async def test_sandbox_arguments_are_checked_before_dispatch(
    provider: str, server: ScriptedOpenAIServer, recorder: Recorder
) -> None:
    class Sandbox:
        async def read_file(self, path: str, offset: int | None = None, limit: int | None = None) -> str:
            raise AssertionError("must not be called with bad arguments")

    server.set_script([tool_call_turn([("sandbox_read_file", {"offset": -1})]), text_turn("ok")])
    system = SystemToolsConfig(sandbox=SandboxToolConfig(client=Sandbox()))
    result = await run_agent_loop(provider, user("read"), make_runtime(server, recorder, system_tools=system))
    reply = tool_messages(result.complete_messages)["call_1_0"]
    assert reply.startswith("Tool input validation failed")
    assert recorder.of("tool_run_end")[0].error_message == reply


async def test_model_request_error_ends_the_run_with_an_error_result(
    provider: str, server: ScriptedOpenAIServer, recorder: Recorder
) -> None:
    from fathom.testing import error_turn

    server.set_script([tool_call_turn([("add", {"a": 1, "b": 1})]), error_turn(400, "bad request body")])
    result = await run_agent_loop(provider, user("x"), make_runtime(server, recorder, tools=[add]))
    assert result.status == "error" and result.finish_reason == "error"
    assert result.error is not None and "bad request body" in result.error
    assert tool_messages(result.complete_messages) == {"call_1_0": "2"}  # the work done so far is kept
    assert recorder.pushed_modules() == [[AGENT_CALL_MODULE]]  # the failed request is not billed


async def test_ask_resume_without_provider_state_answers_the_waiting_call(
    provider: str, server: ScriptedOpenAIServer, recorder: Recorder
) -> None:
    server.set_script([tool_call_turn([("ask_user", VALID_ASK)]), text_turn("red it is")])
    system = SystemToolsConfig(ask=True)
    paused = await run_agent_loop(
        provider, user("paint"), make_runtime(server, recorder, system_tools=system)
    )
    assert paused.status == "paused"
    resumed_recorder = Recorder()
    resumed = await run_agent_loop(
        provider,
        AgentLoopInput(messages=paused.complete_messages, user_answer='["red"]'),
        make_runtime(server, resumed_recorder, system_tools=system),
    )
    assert resumed.status == "done" and resumed_recorder.types[0] == "ask_resume"
    assert server.chat_requests[1]["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "call_1_0",
        "content": "Q1: Which colour?\nA1: red",
    }


async def test_prompt_mode_raw_sends_the_system_prompt_and_fast_agent_the_agent_guide_first(
    provider: str, server: ScriptedOpenAIServer, recorder: Recorder
) -> None:
    from fathom.agent.system_prompt import AGENT_GUIDE, TOOL_GUIDES

    server.set_script([text_turn("a"), text_turn("b")])
    for mode in ("raw", "fastAgent"):
        runtime = make_runtime(server, recorder, prompt_mode=mode, system_tools=SystemToolsConfig(plan=True))
        result = await run_agent_loop(
            provider, AgentLoopInput(messages=[], system_prompt="Be brief."), runtime
        )
        assert result.status == "done"
    raw, guided = (request["messages"][0] for request in server.chat_requests)
    assert raw == {"role": "system", "content": "Be brief."}
    assert guided["content"] == f"{AGENT_GUIDE}\n\n{TOOL_GUIDES['plan']}\n\nBe brief."
    odd = make_runtime(server, recorder, prompt_mode="chatty")
    refused = await run_agent_loop(provider, user("hi"), odd)
    assert (refused.status, refused.error) == ("error", "Unknown prompt mode: chatty (use fastAgent or raw)")
