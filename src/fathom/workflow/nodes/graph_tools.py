"""Tools wired into a Tool Call / Agent node by ``selectedTools`` edges, and how one runs.

Each target of a ``selectedTools`` edge is a tool: its function name is the node id, its description
the node's ``toolDescription`` / ``intro`` / name, its parameters the node inputs that carry a
``toolDescription`` (a ``toolParams`` node: all its inputs). Calling the tool writes the arguments
into those inputs and runs the tool node and everything downstream of it as a nested run in
tool-call mode; reaching a ``stopTool`` node ends the calling loop; a pause inside becomes the tool's
``interactive`` (resumed inside the same nested run).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from fathom.tools import ToolContext, ToolDefinition, ToolResult
from fathom.workflow.constants import FlowNodeType, NodeOutputKey
from fathom.workflow.dispatch import NodeContext
from fathom.workflow.nodes.content_extract import VALUE_TYPE_SCHEMA
from fathom.workflow.result import WorkflowRunResult
from fathom.workflow.runtime import RuntimeNode, build_runtime_edges


def selected_tool_nodes(ctx: NodeContext) -> list[RuntimeNode]:
    """Targets of this node's ``selectedTools`` edges, in edge order, without duplicates."""
    ids: dict[str, None] = {}
    for edge in ctx.run.edges:
        is_tool_edge = edge.source == ctx.node_id and edge.source_handle == NodeOutputKey.selectedTools
        if is_tool_edge and edge.target in ctx.nodes:
            ids[edge.target] = None
    return [ctx.nodes[node_id] for node_id in ids]


def tool_parameters(node: RuntimeNode) -> dict[str, Any]:
    """JSON Schema of a tool node's parameters."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    every_input = node.flow_node_type == FlowNodeType.toolParams
    for item in node.source.inputs:
        description = (item.model_extra or {}).get("toolDescription")
        if not description and not every_input:
            continue
        schema = dict(VALUE_TYPE_SCHEMA.get(str(item.value_type or "string"), {"type": "string"}))
        schema["description"] = str(description or item.label or item.key)
        properties[item.key] = schema
        if item.required:
            required.append(item.key)
    return {"type": "object", "properties": properties, "required": required}


def tool_description(node: RuntimeNode) -> str:
    """``toolDescription``, else ``intro``, else the node's name."""
    source = node.source
    return source.tool_description or source.intro or node.name


def format_tool_response(value: Any) -> str:
    """Text the model sees: strings as they are, anything else as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


@dataclass
class GraphToolRunner:
    """Runs tool nodes for one Tool Call / Agent node and keeps their responses and usages."""

    ctx: NodeContext
    flow_responses: list[dict[str, Any]] = field(default_factory=list)
    usages: list[dict[str, Any]] = field(default_factory=list)
    run_times: float = 0.0

    async def run(
        self, node_id: str, args: dict[str, Any], record: dict[str, Any] | None = None
    ) -> ToolResult:
        """Run the tool node (or resume its paused nested run from ``record``)."""
        node = self.ctx.nodes[node_id]
        for item in node.inputs:
            if item.key in args:
                item.value = args[item.key]
        if record is not None:
            memory = record.get("memoryEdges") or []
            overrides: dict[str, Any] = {"edges": build_runtime_edges(memory)} if memory else {}
            child = self.ctx.run.child(
                last_interactive=record,
                default_skip_node_queue=record.get("skipNodeQueue"),
                is_tool_call=True,
                usage_sink=None,
                **overrides,
            )
            entries = list(record.get("entryNodeIds") or [node_id])
        else:
            child = self.ctx.run.child(is_tool_call=True, usage_sink=None)
            entries = [node_id]
        result: WorkflowRunResult = await child.execute(entries)
        self.flow_responses.extend(result.flow_responses)
        self.usages.extend(result.flow_usages)
        self.run_times += result.run_times
        stop = any(
            self.ctx.nodes[ran].flow_node_type == FlowNodeType.stopTool
            for ran in result.run_node_ids
            if ran in self.ctx.nodes
        )
        return ToolResult(
            response=format_tool_response(result.tool_responses),
            interactive=result.interactive,
            stop=stop,
            error_message=result.error,
        )

    async def definitions(self, nodes: list[RuntimeNode]) -> list[ToolDefinition]:
        """One tool definition per tool node; a ``toolSet`` node is expanded into its tools, which
        run directly (not as graph branches)."""
        from fathom.workflow.nodes.tool_node import resolve_node_tools

        expanded: list[ToolDefinition] = []
        for node in nodes:
            if node.flow_node_type == FlowNodeType.toolSet:
                expanded.extend(await resolve_node_tools(self.ctx, node))
        nodes = [node for node in nodes if node.flow_node_type != FlowNodeType.toolSet]

        def bind(node_id: str) -> Any:
            async def execute(tool_ctx: ToolContext) -> ToolResult:
                params = tool_ctx.params if isinstance(tool_ctx.params, dict) else {}
                return await self.run(node_id, params)

            return execute

        return [
            *(
                ToolDefinition(
                    name=node.node_id,
                    description=tool_description(node),
                    parameters=tool_parameters(node),
                    execute=bind(node.node_id),
                    kind="workflow",
                )
                for node in nodes
            ),
            *expanded,
        ]

    async def resume(
        self, call: dict[str, Any], messages: list[dict[str, Any]], params: dict[str, Any]
    ) -> ToolResult:
        """``execute_interactive_tool``: continue the paused tool run with the user's answer."""
        function = call.get("function") or {}
        name = str(function.get("name") or call.get("name") or "")
        record = params.get("childrenResponse")
        if name not in self.ctx.nodes or not isinstance(record, dict):
            return ToolResult(response=f"Call tool not found: {name}", error_message="not found")
        return await self.run(name, {}, record)
