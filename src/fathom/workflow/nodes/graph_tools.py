"""Tools wired into a Tool Call / Agent node by ``selectedTools`` edges, and how one runs.

Each target of a ``selectedTools`` edge is a tool: its function name is the node id, its description
the node's ``toolDescription`` / ``intro`` / name. Its model schema is compiled by the shared
tool-input runtime (``compile_tool_runtime``): inputs that carry a ``toolDescription`` (a
``toolParams`` node: all its inputs) or are selected ``agentGenerated`` are the model's parameters,
except file, dataset, model and password inputs, which never reach the model; everything else is a
fixed input. A node whose required fields are still empty (``get_tool_config_status``) is not
offered. Calling the tool merges the arguments with ``merge_tool_runtime_params`` (only whitelisted
keys are written into the node's inputs, so the model cannot overwrite a fixed value) and runs
the tool node and everything downstream of it as a nested run in tool-call mode; reaching a
``stopTool`` node ends the calling loop; a pause inside becomes the tool's ``interactive`` (resumed
inside the same nested run).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from fathom.tools import (
    CompiledToolRuntime,
    ToolConfigStatusResult,
    ToolContext,
    ToolDefinition,
    ToolResult,
    compile_tool_runtime,
    get_tool_config_status,
    merge_tool_runtime_params,
    validate_tool_configuration,
    validate_tool_input_value,
)
from fathom.tools.schema.constants import FlowNodeInputType, ToolConfigStatus
from fathom.workflow.constants import FlowNodeType, NodeOutputKey
from fathom.workflow.dispatch import NodeContext
from fathom.workflow.graph import WorkflowGraphError, WorkflowNode, load_workflow
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


def _is_legacy_tool_param(wire: dict[str, Any], every_input: bool) -> bool:
    """FastGPT's ToolCall node: an input with a ``toolDescription`` (every input of a ``toolParams``
    node) is a model parameter unless an explicit ``selectedType`` or ``isToolParam: false`` says
    otherwise (spec §1.2.6)."""
    if wire.get("isToolParam") is False:
        return False
    selected = wire.get("selectedType")
    if selected:
        return bool(selected == FlowNodeInputType.agentGenerated)
    return every_input or bool(wire.get("toolDescription")) or wire.get("isToolParam") is True


def _tool_node_inputs(node: WorkflowNode) -> list[dict[str, Any]]:
    """The node's stored inputs as NodeIO dicts for the tool-input compiler, with the legacy
    ``toolDescription`` choice turned into ``selectedType: agentGenerated``. Whether an input may be
    generated at all is the compiler's decision (file, dataset, model and password inputs never)."""
    every_input = node.flow_node_type == FlowNodeType.toolParams
    inputs: list[dict[str, Any]] = []
    for item in node.inputs:
        wire = item.model_dump(by_alias=True, exclude_unset=True)
        if _is_legacy_tool_param(wire, every_input):
            render_types = list(wire.get("renderTypeList") or [])
            if FlowNodeInputType.agentGenerated not in render_types:
                render_types.insert(0, FlowNodeInputType.agentGenerated)
            wire["renderTypeList"] = render_types
            wire["selectedType"] = FlowNodeInputType.agentGenerated
            wire.setdefault("valueType", "string")
            if not wire.get("toolDescription"):
                wire["toolDescription"] = str(item.label or item.key)
        inputs.append(wire)
    return inputs


def _raw_json_schema(node: RuntimeNode) -> dict[str, Any] | None:
    """An MCP/HTTP tool node's full input schema (``toolData.inputSchema``), when it carries one."""
    for item in node.source.inputs:
        if item.key == "toolData" and isinstance(item.value, dict):
            schema = item.value.get("inputSchema")
            return schema if isinstance(schema, dict) else None
    return None


def _compile_node_tool(node: RuntimeNode) -> CompiledToolRuntime:
    """The model tool of a tool node: ``compile_tool_runtime`` over its inputs (raises
    :class:`ToolInputConflictError` when a fixed input is also generated)."""
    return compile_tool_runtime(
        node.node_id,
        _tool_description(node),
        inputs=_tool_node_inputs(node.source),
        json_schema=_raw_json_schema(node),
    )


def _tool_node_config_status(node: WorkflowNode) -> ToolConfigStatusResult:
    """``get_tool_config_status`` of a tool node: does it still need the builder to fill a required
    field before the model may call it."""
    return get_tool_config_status(_tool_node_inputs(node))


def _invalid_fixed_inputs(inputs: list[dict[str, Any]]) -> list[str]:
    """Keys of inputs whose builder-fixed value breaks the input's own JSON Schema
    (``customJsonSchema``, kept from an MCP/HTTP tool's schema): ``validate_tool_input_value``."""
    invalid = []
    for wire in inputs:
        schema, value = wire.get("customJsonSchema"), wire.get("value")
        selected = wire.get("selectedType")
        manual = selected not in (FlowNodeInputType.reference, FlowNodeInputType.agentGenerated)
        checkable = isinstance(schema, dict) and value is not None and manual
        if checkable and not validate_tool_input_value(schema, value).success:
            invalid.append(str(wire.get("key")))
    return invalid


def workflow_tool_config_status(workflow: Any) -> dict[str, dict[str, Any]]:
    """``{nodeId: {needConfig, status, valid, invalidInputs}}`` for every node wired as a tool (a
    ``selectedTools`` edge target) and every ``tool`` / ``toolSet`` / ``pluginModule`` node: what the
    editor shows as "needs configuration" (``get_tool_config_status``), whether the node's input modes
    are allowed (``validate_tool_configuration``: an input selected as agent-generated that may not be,
    a reference-only input without a tool description) and which fixed values break their schema. A
    workflow that does not load reports nothing."""
    try:
        graph = load_workflow(workflow, require_entry=False)
    except WorkflowGraphError:
        return {}
    tool_ids = {e.target for e in graph.edges if e.source_handle == NodeOutputKey.selectedTools}
    kinds = {FlowNodeType.tool, FlowNodeType.toolSet, FlowNodeType.pluginModule}
    statuses: dict[str, dict[str, Any]] = {}
    for node in graph.nodes:
        if node.node_id in tool_ids or node.flow_node_type in kinds:
            status = _tool_node_config_status(node)
            inputs = _tool_node_inputs(node)
            statuses[node.node_id] = {
                "needConfig": status.need_config,
                "status": status.status,
                "valid": validate_tool_configuration(inputs, app_level=False),
                "invalidInputs": _invalid_fixed_inputs(inputs),
            }
    return statuses


def _tool_description(node: RuntimeNode) -> str:
    """``toolDescription``, else ``intro``, else the node's name."""
    source = node.source
    return source.tool_description or source.intro or node.name


def _format_tool_response(value: Any) -> str:
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

    compiled: dict[str, CompiledToolRuntime] = field(default_factory=dict)
    pending_config: list[str] = field(default_factory=list)

    async def run(
        self, node_id: str, args: dict[str, Any], record: dict[str, Any] | None = None
    ) -> ToolResult:
        """Run the tool node (or resume its paused nested run from ``record``). The model's
        arguments are merged over the node's fixed inputs by ``merge_tool_runtime_params``: only
        whitelisted (agent-generated) keys are written, so the model never overwrites a fixed input."""
        node = self.ctx.nodes[node_id]
        compiled = self.compiled.get(node_id)
        if compiled is None:
            compiled = self.compiled[node_id] = _compile_node_tool(node)
        merged = merge_tool_runtime_params(compiled.agent_generated_keys, compiled.fixed_input_bindings, args)
        generated = set(compiled.agent_generated_keys)
        for item in node.inputs:
            if item.key in generated and item.key in merged:
                item.value = merged[item.key]
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
            response=_format_tool_response(result.tool_responses),
            interactive=result.interactive,
            stop=stop,
            error_message=result.error,
        )

    async def definitions(self, nodes: list[RuntimeNode]) -> list[ToolDefinition]:
        """One tool definition per tool node, its schema compiled by ``compile_tool_runtime``; a node
        that still waits for configuration (``get_tool_config_status``) is not offered; a ``toolSet``
        node is expanded into its tools, which run directly (not as graph branches). Raises
        :class:`ToolInputConflictError` when a node's fixed input is also generated."""
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

        definitions: list[ToolDefinition] = []
        for node in nodes:
            if _tool_node_config_status(node.source).status == ToolConfigStatus.waitingForConfig:
                self.pending_config.append(node.node_id)
                continue
            compiled = self.compiled[node.node_id] = _compile_node_tool(node)
            function = compiled.model_tool["function"]
            definitions.append(
                ToolDefinition(
                    name=node.node_id,
                    description=str(function.get("description") or ""),
                    parameters=function.get("parameters"),
                    execute=bind(node.node_id),
                    kind="workflow",
                )
            )
        return [*definitions, *expanded]

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
