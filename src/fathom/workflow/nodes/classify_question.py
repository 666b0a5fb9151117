"""``classifyQuestion``: the model picks one of N types; every other type's branch handle is skipped.

Function-calling models get a forced ``classify_question`` tool whose ``type`` argument is an enum of
the type ids; other models (and a tool reply without a valid type) fall back to FastGPT's prompt
mode: the reply text is searched for a type id, then for a type description. No match selects the
last type (FastGPT's fallback). The chosen type is remembered on the chat item (``memories``).
"""

from __future__ import annotations

import json
from typing import Any

from fathom.llm import ChatModel, CompletionResult
from fathom.workflow.constants import FlowNodeType, NodeInputKey, get_handle_id
from fathom.workflow.dispatch import DispatchResponse, NodeContext, register_node
from fathom.workflow.nodes.chat import node_error
from fathom.workflow.nodes.llm_support import (
    ModelUnavailableError,
    bill,
    build_messages,
    last_memory,
    memory_key,
    node_histories,
    resolve_model,
)

CLASSIFY_TOOL_NAME = "classify_question"


def _classify_system_prompt(system_prompt: str, memory: str, type_list: str) -> str:
    """The classifier's instructions: background, last result, the types as ``[{id, description}]``."""
    parts = [
        "## Role\nYou are a question classifier. Decide which type the user's question belongs to, "
        "using the background knowledge, the conversation and the question.",
    ]
    if system_prompt:
        parts.append(f"## Background knowledge\n{system_prompt}")
    if memory:
        parts.append(f"## Last classification\n{memory}")
    parts.append(f"## Types\n{type_list}")
    parts.append("## Task\nReply with the id of the one matching type and nothing else.")
    return "\n\n".join(parts)


def _classify_tool(agents: list[dict[str, Any]]) -> dict[str, Any]:
    """The forced function of function-calling mode."""
    return {
        "type": "function",
        "function": {
            "name": CLASSIFY_TOOL_NAME,
            "description": "Classify the question into one of the given types",
            "parameters": {
                "type": "object",
                "properties": {
                    "type": {
                        "type": "string",
                        "description": "The id of the matching type",
                        "enum": [str(item.get("key")) for item in agents],
                    }
                },
                "required": ["type"],
            },
        },
    }


def _match_answer(answer: str, agents: list[dict[str, Any]]) -> str:
    """Prompt mode: the first type whose id occurs in the reply, else whose description does."""
    for field in ("key", "value"):
        for item in agents:
            needle = str(item.get(field) or "")
            if needle and needle in answer:
                return str(item.get("key"))
    return ""


def _pick_type(result: CompletionResult, agents: list[dict[str, Any]]) -> str:
    """The type id from a tool call (function-calling mode), else from the reply text."""
    keys = {str(item.get("key")) for item in agents}
    for call in result.tool_calls:
        if call.name != CLASSIFY_TOOL_NAME:
            continue
        try:
            args = call.parsed_arguments()
        except ValueError:
            args = {}
        chosen = str(args.get("type", "")) if isinstance(args, dict) else ""
        if chosen in keys:
            return chosen
    return _match_answer(result.content or "", agents)


async def _complete(model: ChatModel, messages: list[dict[str, Any]], agents: list[dict[str, Any]]) -> Any:
    if model.config.function_calling:
        return await model.complete(
            messages,
            tools=[_classify_tool(agents)],
            tool_choice={"type": "function", "function": {"name": CLASSIFY_TOOL_NAME}},
            temperature=0.01,
        )
    return await model.complete(messages, temperature=0.01)


@register_node(FlowNodeType.classifyQuestion)
async def dispatch_classify_question(ctx: NodeContext) -> DispatchResponse:
    """Inputs ``model``, ``systemPrompt``, ``history``, ``userChatInput``, ``agents``
    (``[{key, value}]``) → output ``cqResult`` (the chosen type's description)."""
    question = str(ctx.params.get(NodeInputKey.userChatInput) or "")
    agents: list[dict[str, Any]] = [a for a in ctx.params.get("agents") or [] if isinstance(a, dict)]
    if not question:
        return node_error("Input is empty")
    if not agents:
        return node_error("Classification types are empty")
    try:
        model = resolve_model(ctx, "question classification")
    except ModelUnavailableError as exc:
        return node_error(str(exc))
    histories = node_histories(ctx)
    key = memory_key(ctx)
    memory = last_memory(histories, key)
    type_list = json.dumps(
        [{"id": item.get("key"), "description": item.get("value")} for item in agents], ensure_ascii=False
    )
    system = _classify_system_prompt(
        str(ctx.params.get("systemPrompt") or ""),
        json.dumps(memory, ensure_ascii=False) if memory else "",
        type_list,
    )
    result = await _complete(model, build_messages(system, histories, question), agents)
    chosen_key = _pick_type(result, agents)
    chosen = next((item for item in agents if str(item.get("key")) == chosen_key), agents[-1])
    billed = bill(ctx, model, result)
    return DispatchResponse(
        data={"cqResult": chosen.get("value")},
        skip_handle_ids=[
            get_handle_id(ctx.node_id, "source", str(item.get("key")))
            for item in agents
            if item.get("key") != chosen.get("key")
        ],
        system_memories={key: chosen},
        response_data={
            "totalPoints": billed.points,
            "model": billed.model_name,
            "query": question,
            "inputTokens": billed.input_tokens,
            "outputTokens": billed.output_tokens,
            "cqList": agents,
            "cqResult": chosen.get("value"),
            "contextTotalLen": len(histories) + 2,
        },
        node_dispatch_usages=[billed.usage],
        tool_responses=chosen.get("value"),
    )
