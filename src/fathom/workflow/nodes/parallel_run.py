"""``parallelRun``: runs the nested body (``loopStart`` … ``loopEnd``) once per item, concurrently.

Each task gets fresh runtime copies of the body nodes (``childrenNodeIdList``), its own copy of the
edges and a deep copy of the variables (variable updates inside a task never leak out), and runs
from the body's ``loopStart`` with the item and its 1-based index. A task succeeds when it reaches
``loopEnd``; a failed task is retried up to 3 times; a task that pauses (interactive nodes are not
allowed inside) fails without retry. At most ``parallelRunMaxConcurrency`` tasks run at once
(default 5, at most :data:`PARALLEL_MAX_CONCURRENCY`).
"""

from __future__ import annotations

import asyncio
import copy
from dataclasses import dataclass, field
from typing import Any

from fathom.workflow.constants import FlowNodeType, NodeInputKey
from fathom.workflow.dispatch import DispatchResponse, NodeContext, register_node
from fathom.workflow.result import WorkflowRunResult
from fathom.workflow.runtime import RuntimeEdge, RuntimeNode, build_runtime_node

PARALLEL_MAX_CONCURRENCY = 10
DEFAULT_CONCURRENCY = 5
MAX_ATTEMPTS = 3


def _clamp_concurrency(value: Any, ceiling: int = PARALLEL_MAX_CONCURRENCY) -> int:
    """User concurrency floored, at least 1, at most ``ceiling``; default 5."""
    if value is None or value == "":
        return min(DEFAULT_CONCURRENCY, ceiling)
    try:
        floored = int(float(value))
    except (TypeError, ValueError):
        return min(DEFAULT_CONCURRENCY, ceiling)
    return max(1, min(floored, ceiling))


@dataclass
class TaskOutcome:
    """One item's result."""

    index: int
    success: bool
    data: Any = None
    error: str = ""
    result: WorkflowRunResult | None = None
    points: list[float] = field(default_factory=list)


def _task_nodes(ctx: NodeContext, children: list[str], item: Any, index: int) -> dict[str, RuntimeNode]:
    nodes: dict[str, RuntimeNode] = {}
    for node_id, node in ctx.nodes.items():
        if node_id not in children:
            nodes[node_id] = node  # upstream outputs are read only
            continue
        fresh = build_runtime_node(node.source)
        if fresh.flow_node_type == FlowNodeType.loopStart:
            for node_input in fresh.inputs:
                if node_input.key == NodeInputKey.loopStartInput:
                    node_input.value = item
                elif node_input.key == NodeInputKey.loopStartIndex:
                    node_input.value = index + 1
        nodes[node_id] = fresh
    return nodes


async def _run_task(ctx: NodeContext, children: list[str], item: Any, index: int) -> TaskOutcome:
    outcome = TaskOutcome(index=index, success=False)
    for _ in range(MAX_ATTEMPTS):
        nodes = _task_nodes(ctx, children, item, index)
        starts = [n for n in children if n in nodes and nodes[n].flow_node_type == FlowNodeType.loopStart]
        child = ctx.run.child(
            nodes=nodes,
            edges=[RuntimeEdge.from_any(edge) for edge in ctx.run.edges],
            variables=copy.deepcopy(ctx.variables),
            usage_sink=None,
        )
        try:
            result = await child.execute(starts)
        except Exception as exc:  # a task failure never fails the node
            outcome.error = str(exc) or exc.__class__.__name__
            continue
        outcome.points.append(result.total_points)
        outcome.result = result
        if result.interactive:
            outcome.error = "Interactive nodes are not supported in a parallel run"
            return outcome
        ends = [r for r in result.flow_responses if r.get("moduleType") == FlowNodeType.loopEnd]
        if ends:
            outcome.success, outcome.data, outcome.error = True, ends[0].get("loopOutputValue"), ""
            return outcome
        errors = [str(r["error"]) for r in result.flow_responses if r.get("error")]
        outcome.error = errors[0] if errors else "Sub-workflow did not reach the end node"
        if result.stopped:
            return outcome
    return outcome


def _detail(outcome: TaskOutcome) -> dict[str, Any]:
    extra = {"data": outcome.data} if outcome.success else {"error": outcome.error}
    return {"success": outcome.success, "index": outcome.index, **extra}


def _status(successes: int, total: int) -> str:
    if successes == total:
        return "allSuccess"
    return "allFailure" if successes == 0 else "partialFailure"


@register_node(FlowNodeType.parallelRun)
async def dispatch_parallel_run(ctx: NodeContext) -> DispatchResponse:
    """Inputs ``loopInputArray``, ``childrenNodeIdList``, ``parallelRunMaxConcurrency`` → outputs
    ``parallelSuccessResults`` (successful items' values, input order), ``parallelFullResults``
    (``{success, message, data}`` per item) and ``parallelStatus``."""
    items = ctx.params.get(NodeInputKey.loopInputArray)
    items = [] if items is None else items
    if not isinstance(items, list):
        raise ValueError("Input value is not an array")
    limit = ctx.run.max_loop_times
    if len(items) > limit:
        raise ValueError(f"Input array length cannot be greater than {limit}")
    children: list[str] = list(ctx.params.get(NodeInputKey.childrenNodeIdList) or [])
    gate = asyncio.Semaphore(_clamp_concurrency(ctx.params.get("parallelRunMaxConcurrency")))

    async def guarded(index: int, item: Any) -> TaskOutcome:
        async with gate:
            return await _run_task(ctx, children, item, index)

    outcomes = await asyncio.gather(*(guarded(i, item) for i, item in enumerate(items)))
    successes = [o for o in outcomes if o.success]
    assistant: list[dict[str, Any]] = []
    details: list[dict[str, Any]] = []
    run_times = 0.0
    for outcome in outcomes:
        if outcome.result is not None:
            run_times += outcome.result.run_times
        if outcome.success and outcome.result is not None:
            assistant.extend(outcome.result.assistant_responses)
            details.extend(outcome.result.flow_responses)
    total_points = float(sum(sum(o.points) for o in outcomes))
    usages = [
        {"moduleName": f"{ctx.node.name}-{o.index}", "totalPoints": points}
        for o in outcomes
        for points in o.points
    ]
    success_values = [o.data for o in successes]
    return DispatchResponse(
        data={
            "parallelSuccessResults": success_values,
            "parallelFullResults": [
                {"success": o.success, "message": o.error, "data": o.data if o.success else None}
                for o in outcomes
            ],
            "parallelStatus": _status(len(successes), len(outcomes)),
        },
        assistant_responses=[
            a for a in assistant if (a.get("text") or {}).get("content") or a.get("type") != "text"
        ],
        response_data={
            "totalPoints": total_points,
            "parallelInput": items,
            "parallelResult": success_values,
            "parallelRunDetail": [
                {
                    "success": o.success,
                    "index": o.index,
                    **({"data": o.data} if o.success else {"error": o.error}),
                }
                for o in outcomes
            ],
            "parallelDetail": details,
            "mergeSignId": ctx.node_id,
        },
        node_dispatch_usages=usages or None,
        run_times=max(1.0, run_times),
    )
