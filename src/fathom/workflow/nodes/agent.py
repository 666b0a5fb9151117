"""``agent``: the Agent node on the agent loop kernel (spec §3.1): plan and ask enabled, tools from
``selectedTools`` edges, the run's file reader as the ``read_files`` system tool when one is
injected. An ask pauses the workflow with an ``agentAsk`` interactive; the user's answer resumes the
loop from the saved transcript and provider state (nothing that already ran re-runs)."""

from __future__ import annotations

from typing import Any

from fathom.agent import ReadFileToolConfig, SystemToolsConfig
from fathom.workflow.constants import FlowNodeType
from fathom.workflow.dispatch import DispatchResponse, NodeContext, register_node
from fathom.workflow.nodes.agent_runner import run_agent_node
from fathom.workflow.nodes.read_files import FileContent, render_file


def _read_files_tool(ctx: NodeContext) -> ReadFileToolConfig | None:
    reader = ctx.services.file_reader
    if reader is None:
        return None

    async def execute(args: dict[str, Any], call: dict[str, Any]) -> str:
        blocks = []
        for url in args.get("urls") or []:
            try:
                value = await reader.read_file(str(url))
                content = (
                    value
                    if isinstance(value, FileContent)
                    else FileContent(name=str(value.get("name") or url), text=str(value.get("text") or ""))
                )
            except Exception as exc:
                content = FileContent(name=str(url), text=f"Read file error: {exc}")
            blocks.append(render_file(content))
        return "\n******\n".join(blocks)

    return ReadFileToolConfig(execute=execute)


@register_node(FlowNodeType.agent)
async def dispatch_agent(ctx: NodeContext) -> DispatchResponse:
    """Inputs ``model``, ``systemPrompt``, ``history``, ``userChatInput``, ``temperature``,
    ``maxToken``, ``planEnabled`` / ``askEnabled`` (default on) → output ``answerText``."""
    system_tools = SystemToolsConfig(
        plan=ctx.params.get("planEnabled", True) is not False,
        ask=ctx.params.get("askEnabled", True) is not False,
        read_file=_read_files_tool(ctx),
    )
    return await run_agent_node(ctx, label="agent", system_tools=system_tools, prompt_mode="fastAgent")
