"""The shared body of the Tool Call (``tools``) and Agent (``agent``) nodes: build the kernel's
input and runtime from the node (spec §3.1 ``agentLoopCore``), run :func:`fathom.agent.run_agent_loop`
with the ``fastAgent`` provider, and map the result to node outputs, usages and interactives.

The two shells differ in which system tools are on (plan/ask, sandbox, dataset search for the Agent
node), the stop gate, the reminder and the prompt mode; tools come from ``selectedTools`` edges for both
(:mod:`graph_tools`). Both start their histories from the newest stored checkpoint and store a new one
as the hidden AI value of this turn (:mod:`agent_context`).

Usage: every pushed usage is its own bill line (``agentCall`` lines carry the node's name, compression
lines keep their module name); the node's tokens and points (``toolCallInputTokens`` /
``toolCallOutputTokens`` / ``totalPoints``) count only the ``agentCall`` usages, compression is reported
under ``compressUsages`` and child tools under ``childTotalPoints`` / ``toolDetail``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from fathom.agent import (
    AgentLoopInput,
    AgentLoopResult,
    AgentLoopRuntime,
    AskPause,
    StopGateConfig,
    SystemToolsConfig,
    ToolChildPause,
    run_agent_loop,
)
from fathom.agent.usage import AGENT_CALL_MODULE
from fathom.llm import ChatModel
from fathom.tools import ToolInputConflictError
from fathom.workflow.constants import NodeInputKey, NodeOutputKey
from fathom.workflow.dispatch import DispatchResponse, NodeContext
from fathom.workflow.nodes.agent_adapter import (
    AgentEventAdapter,
    ToolDisplay,
    ask_interactive,
    usage_to_bill,
)
from fathom.workflow.nodes.agent_context import (
    current_user_message,
    history_messages,
    restore_plan,
    select_agent_histories,
)
from fathom.workflow.nodes.chat import node_error
from fathom.workflow.nodes.graph_tools import GraphToolRunner, selected_tool_nodes
from fathom.workflow.nodes.llm_support import ModelUnavailableError, resolve_model

#: Interactive types an agent-style node resumes from.
AGENT_RESUME_TYPES = frozenset({"agentAsk", "toolChildrenInteractive"})
PROVIDER = "fastAgent"


@dataclass
class AgentContextConfig:
    """What the current user message's reminder lists (the Agent node; the Tool Call node has none)."""

    files: Sequence[dict[str, str]] = ()
    datasets: Sequence[dict[str, Any]] = field(default_factory=list)
    sandbox_workdir: str | None = None


def _agent_state(result: AgentLoopResult) -> dict[str, Any]:
    """What a resume needs back: the transcript, the provider state and the plan."""
    return {
        "messages": result.complete_messages,
        "providerState": result.provider_state,
        "activePlan": result.active_plan,
    }


def _pause_interactive(result: AgentLoopResult) -> dict[str, Any] | None:
    """Kernel pause → workflow interactive (``agentAsk`` or ``toolChildrenInteractive``)."""
    pause = result.pause
    if result.status != "paused" or pause is None:
        return None
    if isinstance(pause, AskPause):
        return ask_interactive(pause, _agent_state(result))
    assert isinstance(pause, ToolChildPause)
    return {
        "type": "toolChildrenInteractive",
        "params": {
            "childrenResponse": pause.children_response,
            "toolParams": {"toolCallId": pause.tool_call_id},
            "agentState": _agent_state(result),
        },
    }


def _llm_params(params: dict[str, Any], model: ChatModel) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if params.get("temperature") is not None:
        out["temperature"] = params["temperature"]
    if params.get("maxToken"):
        out["max_tokens"] = min(int(params["maxToken"]), model.config.max_response)
    return out


def _loop_input(
    ctx: NodeContext, question: str, context: AgentContextConfig | None, system_tools: SystemToolsConfig
) -> AgentLoopInput | None:
    system_prompt = str(ctx.params.get("systemPrompt") or "") or None
    last = ctx.last_interactive
    flag = f"agentResumed:{ctx.node_id}"
    if (
        last
        and last.get("type") in AGENT_RESUME_TYPES
        and ctx.node_id in (last.get("entryNodeIds") or [])
        and not ctx.run.run_info.get(flag)
    ):
        ctx.run.run_info[flag] = True
        params = last.get("params") or {}
        state = params.get("agentState") or {}
        loop_input = AgentLoopInput(
            messages=list(state.get("messages") or []),
            system_prompt=system_prompt,
            active_plan=state.get("activePlan"),
            provider_state=state.get("providerState"),
        )
        if last.get("type") == "agentAsk":
            loop_input.user_answer = ctx.query_text
        else:
            loop_input.children_interactive_params = {
                "toolParams": params.get("toolParams") or {},
                "childrenResponse": params.get("childrenResponse"),
            }
        return loop_input
    if not question:
        return None
    content = (
        question
        if context is None
        else current_user_message(
            ctx,
            question,
            files=context.files,
            datasets=context.datasets,
            sandbox_workdir=context.sandbox_workdir,
        )
    )
    histories = select_agent_histories(ctx.histories, ctx.params.get("history", 6))
    messages = [*history_messages(histories), {"role": "user", "content": content}]
    plan = restore_plan(histories) if system_tools.plan else None
    return AgentLoopInput(messages=messages, system_prompt=system_prompt, active_plan=plan)


async def run_agent_node(
    ctx: NodeContext,
    *,
    label: str,
    system_tools: SystemToolsConfig,
    prompt_mode: Literal["fastAgent", "raw"],
    stop_gate: StopGateConfig | None = None,
    context: AgentContextConfig | None = None,
) -> DispatchResponse:
    """Run the node's agent loop; outputs ``answerText``; a pause becomes the node's interactive."""
    try:
        model = resolve_model(ctx, label)
    except ModelUnavailableError as exc:
        return node_error(str(exc))
    question = str(ctx.params.get(NodeInputKey.userChatInput) or "")
    loop_input = _loop_input(ctx, question, context, system_tools)
    if loop_input is None:
        return node_error("Input is empty")
    tool_nodes = selected_tool_nodes(ctx)
    runner = GraphToolRunner(ctx)
    adapter = AgentEventAdapter(
        ctx,
        tools={n.node_id: ToolDisplay(name=n.name, avatar=n.source.avatar or "") for n in tool_nodes},
        stream=ctx.params.get("isResponseAnswerText", True) is not False,
    )
    try:
        tools = await runner.definitions(tool_nodes)
    except (LookupError, RuntimeError, ToolInputConflictError) as exc:
        return node_error(str(exc) or exc.__class__.__name__)
    runtime = AgentLoopRuntime(
        model=model,
        tools=tools,
        execute_interactive_tool=runner.resume,
        usage_push=adapter.usage_push,
        emit_event=adapter.emit_event,
        check_is_stopping=ctx.run.is_stopped,
        system_tools=system_tools,
        prompt_mode=prompt_mode,
        stop_gate=stop_gate,
        llm_params=_llm_params(ctx.params, model),
        stream=ctx.run.stream,
    )
    result = await run_agent_loop(PROVIDER, loop_input, runtime)
    bills = [usage_to_bill(u) for u in adapter.usages]
    own = [
        {**b, "moduleName": ctx.node.name} if b.get("moduleName") == AGENT_CALL_MODULE else b for b in bills
    ]
    child_points = float(sum(u.get("totalPoints") or 0 for u in runner.usages))
    calls = [b for b in bills if b.get("moduleName") == AGENT_CALL_MODULE]
    response_data: dict[str, Any] = {
        "totalPoints": float(sum(b.get("totalPoints") or 0 for b in calls)),
        "model": model.config.display_name,
        "toolCallInputTokens": sum(int(b.get("inputTokens") or 0) for b in calls),
        "toolCallOutputTokens": sum(int(b.get("outputTokens") or 0) for b in calls),
        "childTotalPoints": child_points,
        "query": question,
        "finishReason": result.finish_reason,
        "llmRequests": adapter.llm_details,
        "toolRuns": adapter.tool_details,
        "toolDetail": runner.flow_responses,
        "mergeSignId": ctx.node_id,
    }
    if adapter.plan_details:
        response_data["planDetail"] = adapter.plan_details
    compress = [b for b in bills if b.get("moduleName") != AGENT_CALL_MODULE]
    if compress:
        response_data["compressUsages"] = compress
        response_data["compressDetail"] = adapter.compress_details
    usages = [*own, *runner.usages]
    if result.status == "error":
        message = result.error or "Agent loop error"
        return DispatchResponse(
            error={NodeOutputKey.errorText: message},
            assistant_responses=adapter.assistant_responses,
            response_data={**response_data, "error": message},
            node_dispatch_usages=usages,
            tool_responses={"error": message},
            run_times=1 + runner.run_times,
        )
    answer = result.answer_text if result.status == "done" else ""
    return DispatchResponse(
        data={NodeOutputKey.answerText: answer},
        assistant_responses=adapter.assistant_responses,
        interactive=_pause_interactive(result),
        response_data=response_data,
        node_dispatch_usages=usages,
        tool_responses=answer,
        run_times=1 + runner.run_times,
    )
