"""``loop`` with its nested ``loopStart`` / ``loopEnd``: runs the body sub-graph once per array item.

Each iteration is a nested run (depth + 1) over the same nodes, starting at the body's
``loopStart``; ``loopEnd``'s input is collected into ``loopArray``. A pause inside the body is
wrapped as ``loopInteractive`` and resumed at the same item.
"""

from __future__ import annotations

from typing import Any

from fathom.workflow.constants import FlowNodeType, NodeInputKey, NodeOutputKey
from fathom.workflow.dispatch import DispatchResponse, NodeContext, register_node
from fathom.workflow.runtime import RuntimeEdge, build_runtime_edges


def _loop_resume(ctx: NodeContext) -> dict[str, Any] | None:
    last = ctx.last_interactive
    if not last or last.get("type") != "loopInteractive":
        return None
    if ctx.node_id not in (last.get("entryNodeIds") or []) or ctx.run.run_info.get(
        f"loopResumed:{ctx.node_id}"
    ):
        return None
    ctx.run.run_info[f"loopResumed:{ctx.node_id}"] = True
    return last.get("params") or {}


@register_node(FlowNodeType.loop)
async def dispatch_loop(ctx: NodeContext) -> DispatchResponse:
    """Outputs ``loopArray``; the node response carries ``loopInput``, ``loopResult``, ``loopDetail``."""
    items = ctx.params.get(NodeInputKey.loopInputArray)
    if items is None:
        items = []
    children: list[str] = ctx.params.get(NodeInputKey.childrenNodeIdList) or []
    if not isinstance(items, list):
        raise ValueError("Input value is not an array")
    limit = ctx.run.max_loop_times
    if len(items) > limit:
        raise ValueError(f"Input array length cannot be greater than {limit}")
    starts = [n for n in children if n in ctx.nodes and ctx.nodes[n].flow_node_type == FlowNodeType.loopStart]
    resume = _loop_resume(ctx)
    current_index = int(resume.get("currentIndex") or 0) if resume else None
    child_record = resume.get("childrenResponse") if resume else None
    results: list[Any] = list(resume.get("loopResult") or []) if resume else []
    detail: list[dict[str, Any]] = []
    assistant: list[dict[str, Any]] = []
    total_points = 0.0
    run_times = 0.0
    interactive: dict[str, Any] | None = None
    paused_index = 0
    for index, item in enumerate(value for value in items if value is not None):
        if current_index is not None and index < current_index:
            continue
        resuming_now = current_index is not None and index == current_index and child_record is not None
        for start_id in starts:
            for node_input in ctx.nodes[start_id].inputs:
                if node_input.key == NodeInputKey.loopStartInput:
                    node_input.value = item
                elif node_input.key == NodeInputKey.loopStartIndex:
                    node_input.value = index
        if resuming_now and child_record is not None:
            memory = child_record.get("memoryEdges") or []
            edges: list[RuntimeEdge] = (
                build_runtime_edges(memory)
                if memory
                else [RuntimeEdge.from_any(edge) for edge in ctx.run.edges]
            )
            child = ctx.run.child(
                edges=edges,
                last_interactive=child_record,
                default_skip_node_queue=child_record.get("skipNodeQueue"),
            )
            entries = list(child_record.get("entryNodeIds") or starts)
        else:
            child = ctx.run.child()
            entries = starts
        result = await child.execute(entries)
        run_times += result.run_times
        output = next(
            (
                r.get("loopOutputValue")
                for r in result.flow_responses
                if r.get("moduleType") == FlowNodeType.loopEnd
            ),
            None,
        )
        results.append(output)
        detail.extend(result.flow_responses)
        assistant.extend(
            a
            for a in result.assistant_responses
            if (a.get("text") or {}).get("content") or a.get("type") != "text"
        )
        total_points += result.total_points
        if result.interactive:
            interactive = result.interactive
            results.pop()
            paused_index = index
            break
        if result.stopped or result.budget_exhausted:
            break
    return DispatchResponse(
        data={NodeOutputKey.loopArray: results},
        interactive=(
            {
                "type": "loopInteractive",
                "params": {
                    "currentIndex": paused_index,
                    "childrenResponse": interactive,
                    "loopResult": results,
                    "loopInput": items,
                },
            }
            if interactive
            else None
        ),
        assistant_responses=assistant,
        response_data={
            "totalPoints": total_points,
            "loopInput": items,
            "loopResult": results,
            "loopDetail": detail,
            "mergeSignId": ctx.node_id,
        },
        node_dispatch_usages=[{"totalPoints": total_points, "moduleName": ctx.node.name}],
        run_times=max(1.0, run_times),
        new_variables=dict(ctx.variables),
    )


@register_node(FlowNodeType.loopStart, waits=False)
async def dispatch_loop_start(ctx: NodeContext) -> DispatchResponse:
    """Outputs the current item and its index."""
    return DispatchResponse(
        data={
            NodeOutputKey.loopStartInput: ctx.params.get(NodeInputKey.loopStartInput),
            NodeOutputKey.loopStartIndex: ctx.params.get(NodeInputKey.loopStartIndex),
        },
        response_data={"loopInputValue": ctx.params.get(NodeInputKey.loopStartInput)},
    )


@register_node(FlowNodeType.loopEnd, waits=False)
async def dispatch_loop_end(ctx: NodeContext) -> DispatchResponse:
    """Reports the iteration's value (``loopOutputValue``) for the loop node to collect."""
    return DispatchResponse(response_data={"loopOutputValue": ctx.params.get(NodeInputKey.loopEndInput)})
