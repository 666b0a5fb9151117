"""Engine semantics: concurrency cap, stop signal, depth limit, node errors and catchError,
required-output defaults, events, usages, debug steps, budget with skip cost, pauses inside loops."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from wf_builders import (
    answer,
    cond,
    edge,
    group,
    if_else,
    node_input,
    output,
    start,
    variable_update,
    workflow,
    yes_no_join,
)

from fathom.workflow import (
    DispatchResponse,
    FastAnswerEvent,
    NodeContext,
    NodeResponseEvent,
    NodeStatusEvent,
    UpdateVariablesEvent,
    WorkflowDurationEvent,
    WorkflowEvent,
    WorkflowRun,
    default_registry,
    resume_workflow,
    run_workflow,
)
from fathom.workflow.graph import load_workflow
from fathom.workflow.runtime import build_runtime_edges, build_runtime_nodes


def empty(node_id: str, **extra: Any) -> dict[str, Any]:
    return {
        "nodeId": node_id,
        "name": node_id,
        "flowNodeType": "emptyNode",
        "inputs": [],
        "outputs": [],
        **extra,
    }


def registry_with(handler: Any) -> Any:
    registry = default_registry.copy()
    registry.register("emptyNode")(handler)
    return registry


async def test_at_most_ten_nodes_run_at_once() -> None:
    state = {"now": 0, "max": 0, "runs": 0}

    async def tracked(ctx: NodeContext) -> DispatchResponse:
        state["now"] += 1
        state["runs"] += 1
        state["max"] = max(state["max"], state["now"])
        for _ in range(3):
            await asyncio.sleep(0)
        state["now"] -= 1
        return DispatchResponse()

    fan = [empty(f"n{i}") for i in range(25)]
    graph = workflow([start(), *fan], [edge("start", f"n{i}") for i in range(25)])
    result = await run_workflow(graph, query="q", registry=registry_with(tracked))
    assert state["runs"] == 25
    assert state["max"] == 10
    assert len(result.run_node_ids) == 26


async def test_stop_signal_cancels_running_nodes_and_ends_cleanly() -> None:
    started = asyncio.Event()
    stop = asyncio.Event()

    async def blocking(ctx: NodeContext) -> DispatchResponse:
        started.set()
        await asyncio.Event().wait()
        return DispatchResponse()

    graph = workflow(
        [start(), empty("block"), answer("after", "never")], [edge("start", "block"), edge("block", "after")]
    )
    task = asyncio.ensure_future(run_workflow(graph, query="q", registry=registry_with(blocking), stop=stop))
    await started.wait()
    stop.set()
    result = await task
    assert result.stopped is True
    assert result.run_node_ids == ["start"]
    assert result.answer_text == ""


async def test_stop_callable_prevents_any_node_from_running() -> None:
    result = await run_workflow(workflow([start()], []), query="q", stop=lambda: True)
    assert result.stopped is True and result.run_node_ids == []


async def test_nesting_deeper_than_twenty_returns_an_empty_result() -> None:
    graph = load_workflow(workflow([start(), answer("a", "x")], [edge("start", "a")]))
    run = WorkflowRun(
        nodes=build_runtime_nodes(graph),
        edges=build_runtime_edges(graph.edges),
        registry=default_registry,
        variables={"chatId": "c", "kept": 1},
        depth=21,
    )
    result = await run.execute(["start"])
    assert result.depth_exceeded is True
    assert result.run_node_ids == [] and result.run_times == 1
    assert result.new_variables == {"kept": 1}


async def test_thrown_exception_becomes_node_error_and_skips_every_handle_even_catch() -> None:
    async def boom(ctx: NodeContext) -> DispatchResponse:
        raise RuntimeError("boom")

    graph = workflow(
        [start(), empty("x", catchError=True), answer("ok", "ok"), answer("bad", "bad")],
        [edge("start", "x"), edge("x", "ok"), edge("x", "bad", kind="source_catch")],
    )
    result = await run_workflow(graph, query="q", registry=registry_with(boom))
    assert result.error == "boom"
    assert result.flow_responses[-1]["error"] == "boom" and result.flow_responses[-1]["nodeId"] == "x"
    assert result.skipped_node_ids == ["ok", "bad"]


@pytest.mark.parametrize(
    ("catch", "answer_text", "skipped"), [(True, "\nbad", ["ok"]), (False, "", ["ok", "bad"])]
)
async def test_returned_error_routes_by_catch_error(
    catch: bool, answer_text: str, skipped: list[str]
) -> None:
    async def failing(ctx: NodeContext) -> dict[str, Any]:
        return {"error": {"system_error_text": "bad input"}, "responseData": {"error": "bad input"}}

    node = empty("x", catchError=catch, outputs=[output("system_error_text")])
    graph = workflow(
        [start(), node, answer("ok", "ok"), answer("bad", "bad")],
        [edge("start", "x"), edge("x", "ok"), edge("x", "bad", kind="source_catch")],
    )
    result = await run_workflow(graph, query="q", registry=registry_with(failing))
    assert result.answer_text == answer_text
    assert result.skipped_node_ids == skipped
    assert result.node_outputs["x"]["system_error_text"] == "bad input"


async def test_success_skips_a_wired_error_handle() -> None:
    graph = workflow(
        [start(), empty("x", catchError=True), answer("ok", "ok"), answer("bad", "bad")],
        [edge("start", "x"), edge("x", "ok"), edge("x", "bad", kind="source_catch")],
    )
    result = await run_workflow(graph, query="q")
    assert result.answer_text == "\nok" and result.skipped_node_ids == ["bad"]


async def test_missing_required_outputs_get_typed_defaults() -> None:
    async def partial(ctx: NodeContext) -> DispatchResponse:
        return DispatchResponse(data={"given": "yes"})

    node = empty(
        "x",
        outputs=[
            output("given"),
            output("num", "number", required=True, defaultValue="3"),
            output("list", "arrayString", required=True, defaultValue="a"),
        ],
    )
    result = await run_workflow(
        workflow([start(), node], [edge("start", "x")]), query="q", registry=registry_with(partial)
    )
    assert result.node_outputs["x"] == {"given": "yes", "num": 3, "list": ["a"]}


async def test_event_stream_of_a_simple_run() -> None:
    events: list[WorkflowEvent] = []
    graph = workflow(
        [
            start(),
            if_else("check", [group(cond(["start", "userChatInput"], "isNotEmpty"))]),
            variable_update(
                "set",
                [{"variable": ["VARIABLE_NODE_ID", "seen"], "value": ["", "yes"], "valueType": "string"}],
            ),
            answer("a", "seen={{seen}}"),
        ],
        [edge("start", "check"), edge("check", "set", "IF"), edge("set", "a")],
    )
    result = await run_workflow(graph, query="q", emit=events.append, chat_id="chat-1", user_id="u1")
    kinds = [type(e).__name__ for e in events]
    assert kinds == [
        "NodeResponseEvent",
        "NodeStatusEvent",
        "NodeResponseEvent",
        "UpdateVariablesEvent",
        "NodeResponseEvent",
        "FastAnswerEvent",
        "NodeResponseEvent",
        "WorkflowDurationEvent",
    ]
    status = next(e for e in events if isinstance(e, NodeStatusEvent))
    assert status.sse_data() == {"status": "running", "name": "if check"}
    update = next(e for e in events if isinstance(e, UpdateVariablesEvent))
    assert update.variables == {"seen": "yes"}
    fast = next(e for e in events if isinstance(e, FastAnswerEvent))
    assert fast.sse_data()["choices"][0]["delta"]["content"] == "\nseen=yes"
    responses = [e.response["moduleType"] for e in events if isinstance(e, NodeResponseEvent)]
    assert responses == ["workflowStart", "ifElseNode", "variableUpdate", "answerNode"]
    assert isinstance(events[-1], WorkflowDurationEvent)
    assert result.new_variables == {"seen": "yes"}
    assert result.assistant_responses == [{"type": "text", "text": {"content": "\nseen=yes"}}]


async def test_node_usages_reach_the_sink_once_per_node() -> None:
    pushed: list[list[dict[str, Any]]] = []

    async def billed(ctx: NodeContext) -> DispatchResponse:
        return DispatchResponse(node_dispatch_usages=[{"moduleName": ctx.node.name, "totalPoints": 1.5}])

    graph = workflow([start(), empty("x"), empty("y")], [edge("start", "x"), edge("x", "y")])
    result = await run_workflow(graph, query="q", registry=registry_with(billed), usage_sink=pushed.append)
    assert pushed == [[{"moduleName": "x", "totalPoints": 1.5}], [{"moduleName": "y", "totalPoints": 1.5}]]
    assert result.total_points == 3.0


async def test_skips_cost_a_tenth_of_a_run() -> None:
    graph = yes_no_join()
    result = await run_workflow(graph, query="yes", max_run_times=3.15)
    assert result.run_node_ids == ["start", "check", "a"]
    assert result.skipped_node_ids == ["b", "c"]
    assert result.budget_exhausted is True


async def test_debug_mode_runs_one_step_at_a_time() -> None:
    graph = workflow([start(), answer("a", "A"), answer("b", "B")], [edge("start", "a"), edge("a", "b")])
    first = await run_workflow(graph, query="q", mode="debug")
    assert first.run_node_ids == ["start"]
    debug = first.debug_response
    assert debug is not None and debug["entryNodeIds"] == ["a"]
    assert [e["status"] for e in debug["memoryEdges"]] == ["active", "waiting"]
    assert debug["nodeResponses"]["start"]["type"] == "run"
    second = await run_workflow(
        graph,
        query="q",
        mode="debug",
        entry_node_ids=debug["entryNodeIds"],
        runtime_edges=debug["memoryEdges"],
        node_outputs=first.node_outputs,
    )
    assert second.run_node_ids == ["a"] and second.answer_text == "\nA"
    assert second.debug_response is not None and second.debug_response["entryNodeIds"] == ["b"]


def loop_with_select() -> dict[str, Any]:
    return workflow(
        [
            start(),
            {
                "nodeId": "loop",
                "name": "Loop",
                "flowNodeType": "loop",
                "inputs": [
                    node_input("loopInputArray", ["x", "y"], "arrayString"),
                    node_input("childrenNodeIdList", ["ls", "sel", "te", "le"], "arrayString"),
                ],
                "outputs": [output("loopArray", "arrayAny")],
            },
            {
                "nodeId": "ls",
                "name": "ls",
                "flowNodeType": "loopStart",
                "parentNodeId": "loop",
                "inputs": [
                    node_input("loopStartInput", "", "any"),
                    node_input("loopStartIndex", 0, "number"),
                ],
                "outputs": [output("loopStartInput", "any"), output("loopStartIndex", "number")],
            },
            {
                "nodeId": "sel",
                "name": "sel",
                "flowNodeType": "userSelect",
                "parentNodeId": "loop",
                "inputs": [
                    node_input("description", "pick"),
                    node_input(
                        "userSelectOptions", [{"key": "a", "value": "A"}, {"key": "b", "value": "B"}], "any"
                    ),
                ],
                "outputs": [output("selectResult")],
            },
            {
                "nodeId": "te",
                "name": "te",
                "flowNodeType": "textEditor",
                "parentNodeId": "loop",
                "inputs": [
                    node_input("system_textareaInput", "{{$sel.selectResult$}}-{{x}}"),
                    node_input("system_addInputParam", {}, "dynamic", render="addInputParam"),
                    node_input("x", ["ls", "loopStartInput"], "string", canEdit=True),
                ],
                "outputs": [output("system_text")],
            },
            {
                "nodeId": "le",
                "name": "le",
                "flowNodeType": "loopEnd",
                "parentNodeId": "loop",
                "inputs": [node_input("loopEndInput", ["te", "system_text"], "any")],
                "outputs": [],
            },
            answer("ans", "{{$loop.loopArray$}}"),
        ],
        [
            edge("start", "loop"),
            edge("ls", "sel"),
            edge("sel", "te", "a"),
            edge("sel", "te", "b"),
            edge("te", "le"),
            edge("loop", "ans"),
        ],
    )


async def test_pause_inside_a_loop_resumes_at_the_same_item() -> None:
    graph = loop_with_select()
    first = await run_workflow(graph, query="go")
    record = first.interactive
    assert record is not None and record["type"] == "loopInteractive"
    assert record["entryNodeIds"] == ["loop"]
    assert record["params"]["currentIndex"] == 0
    assert record["params"]["childrenResponse"]["type"] == "userSelect"
    assert record["params"]["childrenResponse"]["entryNodeIds"] == ["sel"]

    second = await resume_workflow(graph, record, "A")
    record2 = second.interactive
    assert record2 is not None and record2["params"]["currentIndex"] == 1
    assert record2["params"]["loopResult"] == ["A-x"]
    assert "start" not in second.run_node_ids

    third = await resume_workflow(graph, record2, "B")
    assert third.interactive is None
    assert third.node_outputs["loop"]["loopArray"] == ["A-x", "B-y"]
    assert third.answer_text == '\n["A-x","B-y"]'


async def test_pending_interactive_in_history_turns_a_run_into_a_resume() -> None:
    graph = loop_with_select()
    first = await run_workflow(graph, query="go")
    histories = [
        {"obj": "Human", "value": [{"type": "text", "text": {"content": "go"}}]},
        {"obj": "AI", "value": first.assistant_responses},
    ]
    second = await run_workflow(graph, query="B", histories=histories)
    assert second.run_node_ids[0] == "loop"
    assert second.interactive is not None and second.interactive["params"]["loopResult"] == ["B-x"]


async def test_answered_record_is_no_longer_pending() -> None:
    from fathom.workflow import is_pending_interactive, mark_interactive_answered

    first = await run_workflow(loop_with_select(), query="go")
    record = first.interactive
    assert record is not None and is_pending_interactive(record)
    inner = mark_interactive_answered(record["params"]["childrenResponse"], "A")
    assert inner["params"]["userSelectedVal"] == "A" and not is_pending_interactive(inner)
    assert record["params"]["childrenResponse"].get("params", {}).get("userSelectedVal") is None


def test_dispatch_response_uses_fastgpt_keys() -> None:
    wire = {
        "data": {"out": 1},
        "answerText": "a",
        "reasoningText": "r",
        "skipHandleId": ["h"],
        "responseData": {"x": 1},
        "nodeDispatchUsages": [{"totalPoints": 1}],
        "childrenResponses": [],
        "toolResponses": "t",
        "assistantResponses": [],
        "rewriteHistories": [],
        "INTERACTIVE": {"type": "userSelect"},
        "runTimes": 2,
        "newVariables": {"v": 1},
        "system_memories": {"m": 1},
    }
    parsed = DispatchResponse.from_any(wire)
    assert parsed.skip_handle_ids == ["h"] and parsed.interactive == {"type": "userSelect"}
    assert parsed.to_wire() == wire
    legacy = DispatchResponse.from_any({"selectResult": "A", "nodeResponse": {"k": 1}})
    assert legacy.data == {"selectResult": "A"} and legacy.response_data == {"k": 1}
