"""``agent``: the Agent node, the seed-003 agent on the agent loop kernel (spec §3.1).

- **System tools**: plan and ask (``planEnabled`` / ``askEnabled``, default on); ``read_files`` when the
  conversation has files; ``dataset_search`` when ``agent_datasetParams.datasets`` selects knowledge
  bases; the ``sandbox_*`` tools when ``useAgentSandbox`` is on. Their executors are catalog entries
  (:mod:`agent_system_tools`).
- **Stop gate**: on whenever planning is on (``maxStopGateRejections``, default 3): a plan with
  unresolved steps sends the model back to work instead of finishing.
- **Prompt mode** ``fastAgent``: the agent guide of the offered tools precedes ``systemPrompt``.
- **Context**: the current user message carries the reminder; the histories start from the newest
  stored checkpoint (:mod:`agent_context`).

An ask pauses the workflow with an ``agentAsk`` interactive; the user's answer resumes the loop from
the saved transcript and provider state (nothing that already ran re-runs)."""

from __future__ import annotations

from typing import Any

from fathom.agent import StopGateConfig, SystemToolsConfig
from fathom.workflow.constants import FlowNodeType
from fathom.workflow.dispatch import DispatchResponse, NodeContext, register_node
from fathom.workflow.nodes.agent_context import current_files, file_entries, select_agent_histories
from fathom.workflow.nodes.agent_runner import AgentContextConfig, run_agent_node
from fathom.workflow.nodes.agent_system_tools import WORKSPACE_DIR, agent_system_tools
from fathom.workflow.variables import chat_value_to_text

DEFAULT_STOP_GATE_REJECTIONS = 3


def _history_file_urls(ctx: NodeContext) -> list[str]:
    urls = []
    for item in select_agent_histories(ctx.histories, ctx.params.get("history", 6)):
        if item.get("obj") == "Human":
            urls += [f["url"] for f in file_entries(chat_value_to_text(item.get("value"))[1])]
    return urls


def _dataset_params(ctx: NodeContext) -> dict[str, Any] | None:
    params = ctx.params.get("agent_datasetParams")
    if isinstance(params, dict):
        return params
    datasets = ctx.params.get("datasets")
    return {"datasets": datasets} if isinstance(datasets, list) and datasets else None


@register_node(FlowNodeType.agent)
async def dispatch_agent(ctx: NodeContext) -> DispatchResponse:
    """Inputs ``model``, ``systemPrompt``, ``history``, ``userChatInput``, ``temperature``,
    ``maxToken``, ``planEnabled`` / ``askEnabled`` (default on), ``agent_datasetParams``,
    ``useAgentSandbox``, ``fileUrlList``, ``maxStopGateRejections`` → output ``answerText``."""
    plan = ctx.params.get("planEnabled", True) is not False
    files = current_files(ctx)
    dataset_params = _dataset_params(ctx)
    sandbox = ctx.params.get("useAgentSandbox") is True
    read_file, dataset_search, sandbox_config = agent_system_tools(
        ctx,
        files=[f["url"] for f in files] + _history_file_urls(ctx),
        dataset_params=dataset_params,
        sandbox=sandbox,
    )
    system_tools = SystemToolsConfig(
        plan=plan,
        ask=ctx.params.get("askEnabled", True) is not False,
        read_file=read_file,
        dataset_search=dataset_search,
        sandbox=sandbox_config,
    )
    rejections = ctx.params.get("maxStopGateRejections")
    stop_gate = (
        StopGateConfig(
            max_rejections=int(rejections) if rejections is not None else DEFAULT_STOP_GATE_REJECTIONS
        )
        if plan
        else None
    )
    reminder = AgentContextConfig(
        files=files,
        datasets=[
            {
                "id": d.get("datasetId"),
                "name": d.get("name") or d.get("datasetId"),
                "description": d.get("intro"),
            }
            for d in (dataset_params or {}).get("datasets") or []
            if isinstance(d, dict)
        ]
        if dataset_search is not None
        else [],
        sandbox_workdir=WORKSPACE_DIR if sandbox_config is not None else None,
    )
    return await run_agent_node(
        ctx,
        label="agent",
        system_tools=system_tools,
        prompt_mode="fastAgent",
        stop_gate=stop_gate,
        context=reminder,
    )
