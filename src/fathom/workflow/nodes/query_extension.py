"""``cfr`` (query extension): rewrite the question using the conversation, for better retrieval.

The model is asked for up to ten rewrites as a JSON string array; the reply is parsed with the
knowledge package's rule (first ``[`` to last ``]``, JSON5 tolerated; anything else means no
rewrite). Output ``system_text`` is the JSON text of ``[question, *rewrites]`` deduplicated on letters
and digits only.
"""

from __future__ import annotations

import json

from fathom.knowledge import parse_query_extension_output
from fathom.knowledge.search.query_extension import extension_prompt
from fathom.knowledge.text import letters_and_digits
from fathom.workflow.constants import FlowNodeType, NodeInputKey, NodeOutputKey
from fathom.workflow.dispatch import DispatchResponse, NodeContext, register_node
from fathom.workflow.nodes.chat import node_error
from fathom.workflow.nodes.llm_support import (
    ModelUnavailableError,
    bill,
    build_messages,
    node_histories,
    resolve_model,
)


def _dedupe_queries(queries: list[str]) -> list[str]:
    """Keep the first of queries equal on letters and digits only."""
    seen: set[str] = set()
    kept: list[str] = []
    for query in queries:
        norm = letters_and_digits(query)
        if norm in seen:
            continue
        seen.add(norm)
        kept.append(query)
    return kept


@register_node(FlowNodeType.queryExtension)
async def dispatch_query_extension(ctx: NodeContext) -> DispatchResponse:
    """Inputs ``model``, ``systemPrompt`` (background), ``history``, ``userChatInput`` → output
    ``system_text`` (JSON array text of the question and its rewrites)."""
    question = str(ctx.params.get(NodeInputKey.userChatInput) or "")
    if not question:
        return node_error("Question is empty")
    try:
        model = resolve_model(ctx, "query extension")
    except ModelUnavailableError as exc:
        return node_error(str(exc))
    histories = node_histories(ctx)
    messages = build_messages(
        extension_prompt(str(ctx.params.get("systemPrompt") or "")), histories, question
    )
    result = await model.complete(messages, temperature=0.1)
    rewrites = [q for q in parse_query_extension_output(result.content or "") if isinstance(q, str)]
    queries = _dedupe_queries([question, *rewrites])
    text = json.dumps(queries, ensure_ascii=False)
    billed = bill(ctx, model, result)
    return DispatchResponse(
        data={NodeOutputKey.text: text},
        response_data={
            "totalPoints": billed.points,
            "model": billed.model_name,
            "inputTokens": billed.input_tokens,
            "outputTokens": billed.output_tokens,
            "query": question,
            "textOutput": text,
        },
        node_dispatch_usages=[billed.usage],
        tool_responses=text,
    )
