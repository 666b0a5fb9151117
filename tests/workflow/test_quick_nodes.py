"""Nodes that never wait run in the run's own task, even when the run can be stopped; the others keep a
task of their own, so a stop still cancels them where they wait."""

from __future__ import annotations

import ast
import asyncio
import inspect
import textwrap
from typing import Any

import pytest
from wf_builders import answer, edge, start, workflow

from fathom.workflow import DispatchResponse, NodeContext, default_registry, run_workflow


def _awaits_in(handler: Any) -> list[str]:
    """The await expressions, ``async for`` and ``async with`` statements in the handler's own body."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(handler)))
    kinds = (ast.Await, ast.AsyncFor, ast.AsyncWith)
    return [type(node).__name__ for node in ast.walk(tree) if isinstance(node, kinds)]


QUICK_TYPES = sorted(t for t in default_registry if not default_registry.waits(t))


def test_the_nodes_without_a_model_or_io_are_registered_as_never_waiting() -> None:
    assert {
        "workflowStart",
        "answerNode",
        "ifElseNode",
        "variableUpdate",
        "textEditor",
        "userSelect",
        "formInput",
        "pluginInput",
        "pluginOutput",
        "emptyNode",
        "loopStart",
        "loopEnd",
    } <= set(QUICK_TYPES)
    for waiting in ("chatNode", "datasetSearchNode", "httpRequest468", "code", "loop", "tools", "appModule"):
        assert default_registry.waits(waiting), waiting
    assert default_registry.waits("no-such-node-type")


@pytest.mark.parametrize("flow_node_type", QUICK_TYPES)
def test_a_node_registered_as_never_waiting_has_no_await_in_its_handler(flow_node_type: str) -> None:
    handler = default_registry.get(flow_node_type)
    assert handler is not None
    assert _awaits_in(handler) == [], f"{flow_node_type}: {handler.__qualname__} awaits"


def test_registering_a_handler_again_without_waits_false_makes_the_type_waiting() -> None:
    registry = default_registry.copy()
    assert not registry.waits("answerNode")

    async def slow_answer(ctx: NodeContext) -> DispatchResponse:
        await asyncio.sleep(0)
        return DispatchResponse()

    registry.register("answerNode")(slow_answer)
    assert registry.waits("answerNode")
    assert not default_registry.waits("answerNode")  # the copy is independent


def _recording_registry(tasks: dict[str, asyncio.Task[Any] | None], *, waits: bool) -> Any:
    registry = default_registry.copy()

    async def recorded(ctx: NodeContext) -> DispatchResponse:
        tasks[ctx.node.node_id] = asyncio.current_task()
        return DispatchResponse()

    registry.register("emptyNode", waits=waits)(recorded)
    return registry


def _empty(node_id: str) -> dict[str, Any]:
    return {"nodeId": node_id, "name": node_id, "flowNodeType": "emptyNode", "inputs": [], "outputs": []}


@pytest.mark.parametrize("waits", [False, True])
async def test_with_a_stop_event_only_a_waiting_node_gets_a_task_of_its_own(waits: bool) -> None:
    tasks: dict[str, asyncio.Task[Any] | None] = {}
    graph = workflow([start(), _empty("a"), _empty("b")], [edge("start", "a"), edge("a", "b")])

    async def run() -> Any:
        tasks["run"] = asyncio.current_task()
        return await run_workflow(
            graph, query="q", registry=_recording_registry(tasks, waits=waits), stop=asyncio.Event()
        )

    result = await run()
    assert result.run_node_ids == ["start", "a", "b"]
    if waits:
        assert (
            tasks["a"] is not tasks["run"] and tasks["b"] is not tasks["run"] and tasks["a"] is not tasks["b"]
        )
    else:
        assert tasks["a"] is tasks["run"] and tasks["b"] is tasks["run"]


async def test_a_stop_set_by_a_quick_node_ends_the_run_before_the_next_node() -> None:
    stop = asyncio.Event()
    registry = default_registry.copy()

    async def stopping(ctx: NodeContext) -> DispatchResponse:
        stop.set()
        return DispatchResponse()

    registry.register("emptyNode", waits=False)(stopping)
    graph = workflow(
        [start(), _empty("stopper"), answer("after", "never")],
        [edge("start", "stopper"), edge("stopper", "after")],
    )
    result = await run_workflow(graph, query="q", registry=registry, stop=stop)
    assert result.stopped is True
    assert result.run_node_ids == ["start", "stopper"]
    assert result.answer_text == ""


async def test_a_stop_cancels_a_waiting_node_that_follows_quick_ones() -> None:
    stop = asyncio.Event()
    started = asyncio.Event()
    registry = default_registry.copy()

    async def blocking(ctx: NodeContext) -> DispatchResponse:
        started.set()
        await asyncio.Event().wait()
        return DispatchResponse()

    registry.register("emptyNode")(blocking)
    graph = workflow(
        [start(), answer("first", "hello"), _empty("block"), answer("after", "never")],
        [edge("start", "first"), edge("first", "block"), edge("block", "after")],
    )
    task = asyncio.ensure_future(run_workflow(graph, query="q", registry=registry, stop=stop))
    await asyncio.wait_for(started.wait(), 5)
    stop.set()
    result = await asyncio.wait_for(task, 5)
    assert result.stopped is True
    assert result.run_node_ids == ["start", "first"]
    assert result.answer_text == "\nhello"  # FastGPT's answer node starts its text with a newline
