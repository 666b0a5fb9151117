"""``pluginModule``: run a workflow tool (plugin) as a child, like ``appModule``.

The plugin's workflow comes from ``services.child_app_runner.load_child_app(pluginId, version)``
(same version pinning and read authorisation as child apps), in a file context derived from the
caller's (the parent's quota; deep copies). The node's params are written into the
plugin's ``pluginInput`` inputs, the plugin runs one level deeper, and the ``pluginOutput`` node's
values become this node's outputs (and its tool response); usage is summed into one line.
"""

from __future__ import annotations

import copy
from typing import Any

from fathom.security.files import (
    DerivedWorkflowFiles,
    WorkflowFileError,
    run_with_derived_workflow_file_context,
)
from fathom.workflow.constants import FlowNodeType, NodeOutputKey
from fathom.workflow.dispatch import DispatchResponse, NodeContext, ServiceUnavailableError, register_node
from fathom.workflow.graph import WorkflowGraph
from fathom.workflow.nodes.app_module import ChildAppLoader, child_usage
from fathom.workflow.nodes.chat import node_error
from fathom.workflow.nodes.system_tools import invoke_system_tool, is_system_tool_id
from fathom.workflow.result import WorkflowRunResult
from fathom.workflow.run import run_workflow


def _bind_plugin_inputs(workflow: Any, params: dict[str, Any]) -> dict[str, Any]:
    """A copy of the plugin's workflow JSON with ``pluginInput`` input values taken from ``params``."""
    graph = workflow.to_dict() if isinstance(workflow, WorkflowGraph) else copy.deepcopy(workflow)
    for node in graph.get("nodes") or []:
        if node.get("flowNodeType") != FlowNodeType.pluginInput:
            continue
        for item in node.get("inputs") or []:
            if item.get("key") in params:
                item["value"] = params[item["key"]]
    return graph


@register_node(FlowNodeType.pluginModule)
async def dispatch_run_plugin(ctx: NodeContext) -> DispatchResponse:
    """Inputs: the plugin's input keys → outputs: the plugin's ``pluginOutput`` keys (+ ``answerText``
    when the plugin answers)."""
    plugin_id = ctx.node.plugin_id
    if not plugin_id:
        return node_error("pluginId is empty")
    if is_system_tool_id(plugin_id):
        return await run_system_tool(ctx, plugin_id)
    loader: ChildAppLoader | None = ctx.services.child_app_runner
    if loader is None:
        raise ServiceUnavailableError("The plugin node needs the child app service")
    try:
        plugin = await loader.load_child_app(plugin_id, ctx.node.version)
    except Exception as exc:
        return node_error(str(exc) or exc.__class__.__name__)
    params = {k: v for k, v in ctx.params.items() if not k.startswith("system_")}
    info = ctx.run.run_info

    async def run_child(derived: DerivedWorkflowFiles) -> WorkflowRunResult:
        return await run_workflow(
            _bind_plugin_inputs(plugin.workflow, params),
            query=derived.query,
            variables=dict(params),
            histories=[],
            services=ctx.services,
            registry=ctx.run.registry,
            emit=None,
            depth=ctx.run.depth + 1,
            max_run_times=ctx.run.max_run_times,
            stop=ctx.run.stop,
            stream=False,
            chat_id=info.get("chatId"),
            response_chat_item_id=info.get("responseChatItemId"),
            app_id=plugin.app_id,
            is_tool_call=True,
        )

    query = ctx.query if isinstance(ctx.query, list) else []
    try:
        result = await run_with_derived_workflow_file_context(run_child, files=[], query=query)
    except WorkflowFileError as exc:
        return node_error(str(exc))
    outputs = [r for r in result.flow_responses if r.get("moduleType") == FlowNodeType.pluginOutput]
    output = outputs[0].get("pluginOutput") if outputs else None
    values: dict[str, Any] = dict(output or {})
    answer = result.answer_text
    data = {**values, **({NodeOutputKey.answerText: answer} if answer else {})}
    total = result.total_points
    if result.error and output is None:
        return DispatchResponse(
            error={NodeOutputKey.errorText: result.error},
            response_data={"error": result.error, "totalPoints": total, "moduleLogo": plugin.avatar},
            node_dispatch_usages=[child_usage(plugin.name, result)],
            tool_responses={"error": result.error},
            run_times=max(1.0, result.run_times),
        )
    return DispatchResponse(
        data=data,
        response_data={
            "moduleLogo": plugin.avatar,
            "totalPoints": total,
            "pluginOutput": values,
            "pluginDetail": result.flow_responses if plugin.can_write else None,
        },
        node_dispatch_usages=[child_usage(plugin.name, result)],
        tool_responses=values,
        run_times=max(1.0, result.run_times),
    )


async def run_system_tool(ctx: NodeContext, plugin_id: str) -> DispatchResponse:
    """A FastGPT system tool (``community-…``/``systemTool-…``): its outputs, or a node error naming it."""
    params = {k: v for k, v in ctx.params.items() if not k.startswith("system_")}
    try:
        values = await invoke_system_tool(ctx, plugin_id, params)
    except ServiceUnavailableError:
        raise
    except Exception as exc:
        return node_error(str(exc) or exc.__class__.__name__)
    return DispatchResponse(
        data=values,
        response_data={"toolInput": params, "pluginOutput": values, "totalPoints": 0},
        tool_responses=values,
    )
