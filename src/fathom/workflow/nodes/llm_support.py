"""Shared plumbing of the small LLM nodes (classify, extract, query extension): model lookup,
chat-item history as OpenAI messages, one non-streamed completion, and usage/bill entries."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fathom.llm import ChatModel, CompletionResult
from fathom.workflow.dispatch import NodeContext, ServiceUnavailableError
from fathom.workflow.nodes.chat import chat_items_to_messages
from fathom.workflow.variables import get_histories


class ModelUnavailableError(LookupError):
    """The node's model id is not configured."""


def resolve_model(ctx: NodeContext, label: str) -> ChatModel:
    """The node's ``model`` through ``services.chat_model_factory``; raises for a missing service
    (:class:`ServiceUnavailableError`) or an unknown id (:class:`ModelUnavailableError`)."""
    factory = ctx.services.chat_model_factory
    if factory is None:
        raise ServiceUnavailableError(f"The {label} node needs a chat model service")
    model_id = str(ctx.params.get("model") or "")
    try:
        model: ChatModel | None = factory(model_id)
    except LookupError:
        model = None
    if model is None:
        raise ModelUnavailableError(f"Model {model_id} is undefined, you need to select a chat model.")
    return model


def node_histories(ctx: NodeContext, default: int = 6) -> list[dict[str, Any]]:
    """The node's ``history`` setting applied to the run's histories (FastGPT default 6 rounds)."""
    return get_histories(ctx.params.get("history", default), ctx.histories)


def last_memory(histories: Sequence[dict[str, Any]], key: str) -> Any:
    """What this node remembered on the last AI item (FastGPT ``memories[appId-nodeId]``)."""
    if not histories:
        return None
    memories = histories[-1].get("memories")
    return memories.get(key) if isinstance(memories, dict) else None


def memory_key(ctx: NodeContext) -> str:
    """``{appId}-{nodeId}``: where the node's memory lives on a chat item."""
    return f"{ctx.run.run_info.get('appId') or ''}-{ctx.node_id}"


def build_messages(
    system_prompt: str, histories: Sequence[dict[str, Any]], user_text: str
) -> list[dict[str, Any]]:
    """System prompt, history rounds, then the user text, as OpenAI messages."""
    return [
        {"role": "system", "content": system_prompt},
        *chat_items_to_messages(list(histories)),
        {"role": "user", "content": user_text},
    ]


@dataclass
class Billed:
    """Points and the usage line of one model call."""

    points: float
    usage: dict[str, Any]
    input_tokens: int
    output_tokens: int
    model_name: str


def bill(ctx: NodeContext, model: ChatModel, result: CompletionResult) -> Billed:
    """Price a completion and build the node's ``nodeDispatchUsages`` entry."""
    usage = result.usage
    points = model.config.price(usage.input_tokens, usage.output_tokens)
    name = model.config.display_name
    return Billed(
        points=points,
        usage={
            "moduleName": ctx.node.name,
            "totalPoints": points,
            "model": name,
            "inputTokens": usage.input_tokens,
            "outputTokens": usage.output_tokens,
        },
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        model_name=name,
    )
