"""The workflow queue (FastGPT ``runWorkflow`` / ``WorkflowQueue``).

Nodes become *active* when an incoming edge turns active; each active node is checked with the
run/skip/wait rule, at most ``max_concurrency`` at a time. Skipped branches propagate through a
skip queue processed only when nothing is running. One interactive pause per run; a per-run
budget (a run costs its ``runTimes``, a skip 0.1) and a nesting depth limit bound every run.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from fathom.tools import error_text
from fathom.workflow.constants import (
    KEEP_ENTRY_NODE_TYPES,
    SKIP_RUN_COST,
    WORKFLOW_MAX_CONCURRENCY,
    WORKFLOW_MAX_DEPTH,
    WORKFLOW_MAX_LOOP_TIMES,
    WORKFLOW_MAX_RUN_TIMES,
    error_handle_id,
)
from fathom.workflow.dispatch import (
    DispatchResponse,
    NodeContext,
    NodeRegistry,
    WorkflowServices,
)
from fathom.workflow.events import (
    EventSink,
    InteractiveEvent,
    NodeResponseEvent,
    NodeStatusEvent,
    WorkflowDurationEvent,
    WorkflowEvent,
)
from fathom.workflow.interactive import build_interactive_record
from fathom.workflow.io_preview import io_preview
from fathom.workflow.params import get_node_params
from fathom.workflow.result import WorkflowRunResult, merge_assistant_text
from fathom.workflow.runtime import RuntimeEdge, RuntimeNode, is_control_edge
from fathom.workflow.status import EdgeClassifier, decide_run_status
from fathom.workflow.values import value_type_format
from fathom.workflow.variables import (
    remove_system_variable,
)

StopSignal = asyncio.Event | Callable[[], bool]
UsageSink = Callable[[list[dict[str, Any]]], None]


class WorkflowRun:
    """State and queue of one (root or nested) workflow run. Use :func:`run_workflow` to start one."""

    def __init__(
        self,
        *,
        nodes: dict[str, RuntimeNode],
        edges: list[RuntimeEdge],
        registry: NodeRegistry,
        variables: dict[str, Any],
        histories: list[dict[str, Any]] | None = None,
        query: Any = None,
        services: WorkflowServices | None = None,
        emit: EventSink | None = None,
        last_interactive: dict[str, Any] | None = None,
        mode: str = "chat",
        depth: int = 1,
        max_run_times: float = WORKFLOW_MAX_RUN_TIMES,
        max_concurrency: int = WORKFLOW_MAX_CONCURRENCY,
        max_loop_times: int = WORKFLOW_MAX_LOOP_TIMES,
        stop: StopSignal | None = None,
        is_tool_call: bool = False,
        stream: bool = True,
        usage_id: str | None = None,
        usage_sink: UsageSink | None = None,
        external_variable_keys: tuple[str, ...] = (),
        default_skip_node_queue: list[dict[str, Any]] | None = None,
        classifier: EdgeClassifier | None = None,
        run_info: dict[str, Any] | None = None,
    ) -> None:
        self.nodes = nodes
        self.edges = edges
        self.registry = registry
        self.variables = variables
        self.histories = list(histories or [])
        self.query = query
        self.services = services or WorkflowServices()
        self._sink = emit
        self.last_interactive = last_interactive
        self.mode = mode
        self.is_debug = mode == "debug"
        self.depth = depth
        self.max_run_times = float(max_run_times)
        self.max_concurrency = max(1, max_concurrency)
        self.max_loop_times = max_loop_times
        self.stop = stop
        self.is_tool_call = is_tool_call
        self.stream = stream
        self.usage_id = usage_id
        self.usage_sink = usage_sink
        self.external_variable_keys = external_variable_keys
        self.run_info = dict(run_info or {})
        self.classifier = classifier or EdgeClassifier.of_nodes(nodes, edges)
        self._position = {node_id: i for i, node_id in enumerate(nodes)}
        self._incoming_all: dict[str, list[RuntimeEdge]] = {}
        self._outgoing_all: dict[str, list[RuntimeEdge]] = {}
        for edge in edges:
            self._incoming_all.setdefault(edge.target, []).append(edge)
            self._outgoing_all.setdefault(edge.source, []).append(edge)
        self._active: dict[str, None] = {}
        self._skip_queue: dict[str, set[str]] = {}
        for item in default_skip_node_queue or []:
            if item.get("id") in nodes:
                self._add_skip_node(item["id"], set(item.get("skippedNodeIdList") or []))
        # results
        self.result = WorkflowRunResult()
        self._interactive: tuple[list[str], dict[str, Any]] | None = None
        self._debug_next: list[str] = []
        self._debug_responses: dict[str, dict[str, Any]] = {}
        self.stopped = False

    # ----------------------------------------------------------------- public helpers
    def emit(self, event: WorkflowEvent) -> None:
        """Forward an event to the run's sink (tagged with this run's depth)."""
        if self._sink is not None:
            event.depth = self.depth
            self._sink(event)

    def is_stopped(self) -> bool:
        """Whether the outside asked this run to stop."""
        if self.stop is None:
            return False
        if isinstance(self.stop, asyncio.Event):
            return self.stop.is_set()
        return bool(self.stop())

    def child(self, **overrides: Any) -> WorkflowRun:
        """A nested run over the same nodes (loop bodies): fresh queue, depth + 1, remaining budget."""
        settings: dict[str, Any] = dict(
            nodes=self.nodes,
            edges=[RuntimeEdge.from_any(edge) for edge in self.edges],
            registry=self.registry,
            variables=self.variables,
            histories=self.histories,
            query=self.query,
            services=self.services,
            emit=self._sink,
            last_interactive=None,
            mode=self.mode,
            depth=self.depth + 1,
            max_run_times=self.max_run_times,
            max_concurrency=self.max_concurrency,
            max_loop_times=self.max_loop_times,
            stop=self.stop,
            is_tool_call=self.is_tool_call,
            stream=self.stream,
            usage_id=self.usage_id,
            usage_sink=self.usage_sink,
            external_variable_keys=self.external_variable_keys,
            classifier=self.classifier,
            run_info=self.run_info,
        )
        settings.update(overrides)
        return WorkflowRun(**settings)

    # ----------------------------------------------------------------- main loop
    async def execute(self, entry_node_ids: list[str]) -> WorkflowRunResult:
        """Run from the entry nodes until the queue drains, a pause, the budget or a stop."""
        if self.depth > WORKFLOW_MAX_DEPTH:
            self.result.run_times = 1
            self.result.new_variables = self._returned_variables()
            self.result.depth_exceeded = True
            return self.result
        started = time.perf_counter()
        for node_id in entry_node_ids:
            if node_id in self.nodes:
                self.nodes[node_id].is_entry = True
        for node in self.nodes.values():
            if node.flow_node_type not in KEEP_ENTRY_NODE_TYPES:
                node.is_entry = False
        for node_id in entry_node_ids:
            if node_id in self.nodes:
                self._active[node_id] = None
        await self._drive()
        self._finish(time.perf_counter() - started)
        return self.result

    async def _drive(self) -> None:
        """Check the active nodes, at most ``max_concurrency`` at a time. A node alone in the queue runs
        in the run's own task when nothing could interrupt it half way: the run has no stop event, or
        the node's handler never awaits (``NodeRegistry.waits``); any other node runs in a task of its
        own beside a waiter on the stop event, so a stop cancels it where it waits."""
        running: set[asyncio.Task[None]] = set()
        stop_event = self.stop if isinstance(self.stop, asyncio.Event) else None
        stop_waiter: asyncio.Task[Any] | None = None
        try:
            while True:
                if self.is_stopped():
                    self.stopped = True
                    break
                while self._active and len(running) < self.max_concurrency:
                    node_id = next(iter(self._active))
                    del self._active[node_id]
                    node = self.nodes.get(node_id)
                    if node is None:
                        continue
                    if (
                        not running
                        and not self._active
                        and (stop_event is None or not self.registry.waits(node.flow_node_type))
                    ):
                        await self._check(node, None)
                        break
                    if stop_event is not None and stop_waiter is None:
                        stop_waiter = asyncio.ensure_future(stop_event.wait())
                    running.add(asyncio.ensure_future(self._check(node, None)))
                if self._active and len(running) < self.max_concurrency:
                    continue
                if not running:
                    if self._active:
                        continue
                    if self.is_debug:
                        if not self._debug_next and self._skip_queue:
                            await self._process_skip()
                            continue
                        break
                    if self._skip_queue and self._interactive is None:
                        await self._process_skip()
                        continue
                    break
                waiters: set[asyncio.Future[Any]] = set(running)
                if stop_waiter is not None:
                    waiters.add(stop_waiter)
                done, _ = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    if task is stop_waiter:
                        continue
                    running.discard(task)
                    task.result()
        finally:
            if running:
                for task in running:
                    task.cancel()
                await asyncio.gather(*running, return_exceptions=True)
            if stop_waiter is not None:
                stop_waiter.cancel()

    async def _process_skip(self) -> None:
        node_id = next(iter(self._skip_queue))
        skipped = self._skip_queue.pop(node_id)
        await self._check(self.nodes[node_id], skipped)

    def _add_skip_node(self, node_id: str, skipped: set[str]) -> None:
        previous = self._skip_queue.get(node_id)
        self._skip_queue[node_id] = skipped | previous if previous else set(skipped)

    # ----------------------------------------------------------------- one node
    async def _check(self, node: RuntimeNode, skipped: set[str] | None) -> None:
        skipped = set() if skipped is None else skipped
        if self.max_run_times <= 0:
            self.result.budget_exhausted = True
            return
        if self.is_stopped():
            self.stopped = True
            return
        status = decide_run_status(self.classifier.classify(node.node_id), self.edges)
        if status == "run":
            for edge in self._incoming_all.get(node.node_id, ()):
                edge.status = "waiting"
            result = await self._run_node(node)
            self.result.run_node_ids.append(node.node_id)
        elif status == "skip" and node.node_id not in skipped:
            for edge in self._incoming_all.get(node.node_id, ()):
                edge.status = "waiting"
            self.max_run_times -= SKIP_RUN_COST
            skipped.add(node.node_id)
            # A skip costs SKIP_RUN_COST only (FastGPT also pushes the default runTimes of 1 here).
            result = DispatchResponse(
                skip_handle_ids=[e.source_handle for e in self._outgoing_all.get(node.node_id, ())],
                run_times=0,
            )
            self.result.skipped_node_ids.append(node.node_id)
        else:
            return
        if self.is_debug:
            self._debug_responses[node.node_id] = {
                "nodeId": node.node_id,
                "type": status,
                "response": result.response_data,
                **({"interactiveResponse": result.interactive} if result.interactive else {}),
            }
        if status == "run":
            self._skip_queue.pop(node.node_id, None)
        if result.skip_handle_ids:
            skipped.add(node.node_id)
        next_active, next_skip = self._node_output(node, result)
        for target in next_skip:
            self._add_skip_node(target, skipped)
        if result.interactive:
            if self.is_debug:
                self._debug_next.append(node.node_id)
            self._interactive = ([node.node_id], result.interactive)
            return
        if self.is_debug:
            self._debug_next.extend(next_active)
        else:
            for target in next_active:
                self._active[target] = None

    def get_node_params(self, node: RuntimeNode) -> dict[str, Any]:
        """Resolve a node's inputs: templates, then references, then ``valueTypeFormat``."""
        return get_node_params(node, self.nodes, self.variables)

    async def _run_node(self, node: RuntimeNode) -> DispatchResponse:
        if node.show_status and not self.is_tool_call:
            self.emit(NodeStatusEvent(node_id=node.node_id, name=node.name))
        started = time.perf_counter()
        outgoing = [edge.source_handle for edge in self._outgoing_all.get(node.node_id, ())]
        params: dict[str, Any] = {}
        try:
            handler = self.registry.get(node.flow_node_type)
            if handler is None:
                raise NotImplementedError(
                    f"Node type '{node.flow_node_type}' is not available in this server"
                )
            params = self.get_node_params(node)
            result = DispatchResponse.from_any(await handler(NodeContext(node=node, params=params, run=self)))
            catch_handle = error_handle_id(node.node_id)
            own_skips = list(result.skip_handle_ids or [])
            if result.error:
                if node.catch_error:
                    result.skip_handle_ids = own_skips + [h for h in outgoing if h != catch_handle]
                else:
                    result.skip_handle_ids = outgoing
            else:
                result.skip_handle_ids = own_skips + ([catch_handle] if catch_handle in outgoing else [])
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a node failure never crashes the run
            result = DispatchResponse(response_data={"error": error_text(exc)}, skip_handle_ids=outgoing)
        if result.response_data is not None:
            result.response_data = {
                **result.response_data,
                "id": f"{node.node_id}-{len(self.result.flow_responses)}-{time.monotonic_ns() % 10**9}",
                "nodeId": node.node_id,
                "moduleName": node.name,
                "moduleType": node.flow_node_type,
                "runningTime": round(time.perf_counter() - started, 2),
            }
            if self.mode == "test" and self.depth == 1:  # the chat test: what the node read and produced
                result.response_data["nodeInputs"] = io_preview(params)
                result.response_data["nodeOutputs"] = io_preview(result.data or {})
            if not self.is_tool_call and self.depth == 1:
                self.emit(NodeResponseEvent(response=result.response_data))
        if result.data is not None:
            for output in node.outputs:
                if output.required and result.data.get(output.key) is None:
                    result.data[output.key] = value_type_format(output.default_value, output.value_type)
        if result.new_variables:
            self.variables.update(result.new_variables)
        return result

    def _node_output(self, node: RuntimeNode, result: DispatchResponse) -> tuple[list[str], list[str]]:
        self._push_store(result)
        values = {**(result.data or {}), **(result.error or {})}
        if values:
            for output in node.outputs:
                if output.key in values and values[output.key] is not None:
                    output.value = values[output.key]
        skip = set(result.skip_handle_ids or ())
        active: set[str] = set()
        skipped: set[str] = set()
        for edge in self._outgoing_all.get(node.node_id, ()):
            if not is_control_edge(edge):
                continue
            if edge.source_handle in skip:
                edge.status = "skipped"
                skipped.add(edge.target)
            else:
                edge.status = "active"
                active.add(edge.target)
        order = self._position
        return sorted(active, key=order.__getitem__), sorted(skipped, key=order.__getitem__)

    def _push_store(self, result: DispatchResponse) -> None:
        run_times = result.run_times if result.run_times is not None else 1
        self.result.run_times += run_times
        self.max_run_times -= run_times
        if result.system_memories:
            self.result.system_memories = {**(self.result.system_memories or {}), **result.system_memories}
        if result.response_data is not None:
            self.result.flow_responses.append(result.response_data)
            if result.response_data.get("error"):
                self.result.error = str(result.response_data["error"])
        if result.node_dispatch_usages:
            if self.usage_sink is not None:
                self.usage_sink(result.node_dispatch_usages)
            self.result.flow_usages.extend(result.node_dispatch_usages)
        tool = result.tool_responses
        if tool is not None and not (isinstance(tool, (list, dict)) and len(tool) == 0):
            self.result.tool_responses = tool
        if result.assistant_responses:
            self.result.assistant_responses.extend(result.assistant_responses)
        elif result.assistant_responses is None:
            if result.reasoning_text:
                self.result.assistant_responses.append(
                    {"type": "reasoning", "reasoning": {"content": result.reasoning_text}}
                )
            if result.answer_text:
                self.result.assistant_responses.append(
                    {"type": "text", "text": {"content": result.answer_text}}
                )
        if result.rewrite_histories is not None:
            self.histories = list(result.rewrite_histories)

    # ----------------------------------------------------------------- end of run
    def _returned_variables(self) -> dict[str, Any]:
        return remove_system_variable(self.variables, self.external_variable_keys)

    def _skip_queue_wire(self) -> list[dict[str, Any]]:
        return [
            {"id": node_id, "skippedNodeIdList": sorted(ids)} for node_id, ids in self._skip_queue.items()
        ]

    def _memory_edges(self, entry_ids: list[str]) -> list[dict[str, Any]]:
        return [
            {**edge.to_dict(), **({"status": "active"} if edge.target in entry_ids else {})}
            for edge in self.edges
        ]

    def _finish(self, elapsed: float) -> None:
        result = self.result
        if self._interactive is not None:
            entry_ids, response = self._interactive
            record = build_interactive_record(
                response,
                entry_ids=entry_ids,
                memory_edges=self._memory_edges(entry_ids),
                nodes=self.nodes.values(),
                skip_node_queue=self._skip_queue_wire(),
                usage_id=self.usage_id,
            )
            if not self.is_tool_call and self.depth == 1:
                self.emit(InteractiveEvent(interactive=record))
            if self.depth == 1:
                result.assistant_responses.append({"type": "interactive", "interactive": record})
            result.interactive = record
        result.duration_seconds = round(elapsed, 2)
        if self.depth == 1:
            self.emit(WorkflowDurationEvent(duration_seconds=result.duration_seconds))
        result.assistant_responses = merge_assistant_text(result.assistant_responses)
        result.new_variables = self._returned_variables()
        result.edges = self.edges
        result.node_outputs = {node.node_id: node.output_values() for node in self.nodes.values()}
        result.histories = self.histories
        result.stopped = self.stopped
        if self.is_debug:
            entry_ids = list(dict.fromkeys(self._debug_next))
            result.debug_response = {
                "memoryEdges": self._memory_edges(entry_ids),
                "entryNodeIds": entry_ids,
                "nodeResponses": self._debug_responses,
                "skipNodeQueue": self._skip_queue_wire(),
            }
