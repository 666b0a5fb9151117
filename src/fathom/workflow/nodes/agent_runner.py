"""The shared body of the Tool Call (``tools``) and Agent (``agent``) nodes: build the kernel's
input and runtime from the node (spec §3.1 ``agentLoopCore``), run :func:`fathom.agent.run_agent_loop`
with the ``fastAgent`` provider, and map the result to node outputs, usages and interactives.

The two shells differ only in which system tools are on (plan/ask for the Agent node) and the
prompt mode; tools come from ``selectedTools`` edges for both (:mod:`graph_tools`).
"""

from __future__ import annotations

from typing import Any, Literal

from fathom.agent import (
    AgentLoopInput,
    AgentLoopResult,
    AgentLoopRuntime,
    AskPause,
    SystemToolsConfig,
    ToolChildPause,
    run_agent_loop,
)
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
from fathom.workflow.nodes.chat import chat_items_to_messages, node_error
from fathom.workflow.nodes.graph_tools import GraphToolRunner, selected_tool_nodes
from fathom.workflow.nodes.llm_support import ModelUnavailableError, node_histories, resolve_model

#: Interactive types an agent-style node resumes from.
AGENT_RESUME_TYPES = frozenset({"agentAsk", "toolChildrenInteractive"})
PROVIDER = "fastAgent"


def agent_state(result: AgentLoopResult) -> dict[str, Any]:
    """What a resume needs back: the transcript, the provider state and the plan."""
    return {
        "messages": result.complete_messages,
        "providerState": result.provider_state,
        "activePlan": result.active_plan,
    }


def pause_interactive(result: AgentLoopResult) -> dict[str, Any] | None:
    """Kernel pause → workflow interactive (``agentAsk`` or ``toolChildrenInteractive``)."""
    pause = result.pause
    if result.status != "paused" or pause is None:
        return None
    if isinstance(pause, AskPause):
        return ask_interactive(pause, agent_state(result))
    assert isinstance(pause, ToolChildPause)
    return {
        "type": "toolChildrenInteractive",
        "params": {
            "childrenResponse": pause.children_response,
            "toolParams": {"toolCallId": pause.tool_call_id},
            "agentState": agent_state(result),
        },
    }


def _llm_params(params: dict[str, Any], model: ChatModel) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if params.get("temperature") is not None:
        out["temperature"] = params["temperature"]
    if params.get("maxToken"):
        out["max_tokens"] = min(int(params["maxToken"]), model.config.max_response)
    return out


def _loop_input(ctx: NodeContext, question: str) -> AgentLoopInput | None:
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
    messages = [*chat_items_to_messages(node_histories(ctx)), {"role": "user", "content": question}]
    return AgentLoopInput(messages=messages, system_prompt=system_prompt)


async def run_agent_node(
    ctx: NodeContext,
    *,
    label: str,
    system_tools: SystemToolsConfig,
    prompt_mode: Literal["fastAgent", "raw"],
) -> DispatchResponse:
    """Run the node's agent loop; outputs ``answerText``; a pause becomes the node's interactive."""
    try:
        model = resolve_model(ctx, label)
    except ModelUnavailableError as exc:
        return node_error(str(exc))
    question = str(ctx.params.get(NodeInputKey.userChatInput) or "")
    loop_input = _loop_input(ctx, question)
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
        llm_params=_llm_params(ctx.params, model),
        stream=ctx.run.stream,
    )
    result = await run_agent_loop(PROVIDER, loop_input, runtime)
    own = [
        {**usage_to_bill(u), "moduleName": ctx.node.name}
        if usage_to_bill(u).get("moduleName") == "account_usage:agent_call"
        else usage_to_bill(u)
        for u in adapter.usages
    ]
    child_points = float(sum(u.get("totalPoints") or 0 for u in runner.usages))
    input_tokens, output_tokens = adapter.token_totals()
    response_data: dict[str, Any] = {
        "totalPoints": adapter.total_points + child_points,
        "model": model.config.display_name,
        "toolCallInputTokens": input_tokens,
        "toolCallOutputTokens": output_tokens,
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
        interactive=pause_interactive(result),
        response_data=response_data,
        node_dispatch_usages=usages,
        tool_responses=answer,
        run_times=1 + runner.run_times,
    )
