"""``chatNode``: one LLM completion with system prompt, selected history and dataset quotes.

The model comes from ``services.chat_model_factory(model_id)`` (a :class:`fathom.llm.ChatModel`).
Quotes are cut to the model's quote budget with the workflow budget rule
(``filterSearchResultsByMaxChars``), rendered with the quote template and placed in the system prompt
(or, for the ``user`` quote role or a prompt containing ``{{question}}``, in the user message).
Text and reasoning deltas stream as ``answer`` events.

The node's response has no ``quoteList`` (DRIFT: FastGPT's AI chat node reported the quotes it kept up
to 4.6; its newest reports them only on the knowledge-base search node, whose list the history's
``totalQuoteList`` is made of): a knowledge-base turn stores its quotes once.
"""

from __future__ import annotations

from typing import Any

from fathom.knowledge.search import SearchDataItem, filter_search_results_by_max_chars
from fathom.knowledge.search.types import items_of
from fathom.llm import ChatModel, ReasoningDelta, TextDelta, count_tokens
from fathom.workflow.constants import FlowNodeType, NodeInputKey, NodeOutputKey
from fathom.workflow.dispatch import DispatchResponse, NodeContext, ServiceUnavailableError, register_node
from fathom.workflow.events import AnswerEvent
from fathom.workflow.prompts import (
    DEFAULT_QUOTE_TEMPLATE,
    SYSTEM_PROMPT_SEPARATOR,
    default_quote_prompt,
    format_quote_time,
)
from fathom.workflow.variables import chat_value_to_text, get_histories, replace_variable

DEFAULT_QUOTE_BUDGET = 13000
#: FastGPT's chat node keeps this many characters at each end of the first system prompt and of the last
#: two messages in ``historyPreview``; every other message keeps 50 at each end (``getHistoryPreview``)
PREVIEW_EDGE, PREVIEW_MIDDLE = 10000, 50
_PREVIEW_ROLES = {"system": "System", "user": "Human", "assistant": "AI"}


def _slice_start_end(text: str, start: int, end: int) -> str:
    """FastGPT's ``sliceStrStartEnd``: the first ``start`` and last ``end`` characters of a long text."""
    if len(text) <= start + end:
        return text
    return f"{text[:start]}\n\n...[hide {len(text) - start - end} chars]...\n\n{text[-end:]}"


def _preview_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        content = "\n".join(
            str(part.get("text") or "") for part in content if isinstance(part, dict) and part.get("text")
        )
    text = str(content or "").strip() if message.get("role") == "assistant" else str(content or "")
    if not text and message.get("role") == "assistant":
        calls = message.get("tool_calls") or []
        text = ",".join(str((call.get("function") or {}).get("name") or "") for call in calls)
    return text


def _history_preview(messages: list[dict[str, Any]]) -> list[dict[str, str]]:
    """FastGPT's ``historyPreview`` of a chat node: every message of the completion (the answer too) as
    ``{obj: System | Human | AI, value}``, tool messages left out, long texts cut in the middle."""
    kept = [m for m in messages if m.get("role") in _PREVIEW_ROLES]
    preview = []
    for position, message in enumerate(kept):
        obj = _PREVIEW_ROLES[str(message["role"])]
        edge = (obj == "System" and position == 0) or position >= len(kept) - 2
        size = PREVIEW_EDGE if edge else PREVIEW_MIDDLE
        preview.append({"obj": obj, "value": _slice_start_end(_preview_text(message), size, size)})
    return preview


def node_error(message: str) -> DispatchResponse:
    """FastGPT ``getNodeErrResponse``: error output, node response error, tool response error."""
    return DispatchResponse(
        error={NodeOutputKey.errorText: message},
        response_data={"error": message},
        tool_responses={"error": message},
    )


def chat_items_to_messages(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """FastGPT chat items (``obj`` + ``value`` list) as OpenAI messages (text parts only)."""
    roles = {"System": "system", "Human": "user", "AI": "assistant"}
    messages: list[dict[str, Any]] = []
    for item in items:
        role = roles.get(str(item.get("obj")))
        if role is None:
            continue
        value = item.get("value")
        if isinstance(value, str):
            text = value
        elif role == "system":
            text = "\n".join(
                (v.get("text") or {}).get("content", "") for v in value or [] if isinstance(v, dict)
            )
        else:
            text = chat_value_to_text(value)[0]
        if text:
            messages.append({"role": role, "content": text})
    return messages


def _render_quotes(quotes: list[SearchDataItem], template: str) -> str:
    """Each quote through the template, trimmed, joined by ``\\n------\\n``."""
    rendered = []
    for index, item in enumerate(quotes):
        values = {
            "id": item.id,
            "q": item.q,
            "a": item.a or "",
            "updateTime": format_quote_time(item.update_time),
            "source": item.source_name,
            "sourceId": str(item.source_id or ""),
            "index": index + 1,
        }
        rendered.append(str(replace_variable(template, values)).strip())
    return "\n------\n".join(rendered)


def _quote_budget(model: ChatModel) -> int:
    """Tokens of quotes a model takes: ``default_params.quoteMaxToken`` or half its context (≤ 13k)."""
    configured = model.config.default_params.get("quoteMaxToken")
    if isinstance(configured, int) and configured > 0:
        return configured
    return min(DEFAULT_QUOTE_BUDGET, model.config.max_context // 2)


def _check_quote_qa_value(value: Any) -> list[dict[str, Any]] | None:
    """FastGPT's ``checkQuoteQAValue``: the quotes when the input resolved to a list of quote objects
    (each with a ``q``); an empty list stays empty (the quote prompt is still added); anything else (an
    unresolved reference, a skipped search, malformed items) is no quote input at all."""
    if not isinstance(value, list):
        return None
    if any(not isinstance(item, dict) or not item.get("q") for item in value):
        return None
    return value


@register_node(FlowNodeType.chatNode)
async def dispatch_chat_completion(ctx: NodeContext) -> DispatchResponse:
    """Outputs ``answerText`` (trimmed), ``reasoningText`` and ``history`` (selected history + this round)."""
    params = ctx.params
    factory = ctx.services.chat_model_factory
    if factory is None:
        raise ServiceUnavailableError("The AI chat node needs a chat model service")
    model_id = str(params.get("model") or "")
    try:
        model: ChatModel | None = factory(model_id)
    except LookupError:
        model = None
    if model is None:
        return node_error(f"Model {model_id} is undefined, you need to select a chat model.")
    history_setting = params.get(NodeInputKey.history, 6)
    chat_histories = get_histories(history_setting, ctx.histories)
    question = str(params.get(NodeInputKey.userChatInput) or "")
    if not question:
        return node_error("AI input is empty")
    raw_quotes = _check_quote_qa_value(params.get("quoteQA"))
    use_quotes = raw_quotes is not None
    quotes = items_of(raw_quotes or [])
    # no trace: the budget's entries would be thrown away
    kept, _ = filter_search_results_by_max_chars(quotes, _quote_budget(model), count_tokens, trace=False)
    quote_text = _render_quotes(kept, str(params.get("quoteTemplate") or DEFAULT_QUOTE_TEMPLATE))
    custom_prompt = str(params.get("quotePrompt") or "")
    quote_role = (
        "user" if params.get("aiChatQuoteRole") == "user" or "{{question}}" in custom_prompt else "system"
    )
    prompt_template = custom_prompt or default_quote_prompt(quote_role)
    user_text = question
    if use_quotes and quote_role == "user":
        user_text = str(replace_variable(prompt_template, {"quote": quote_text, "question": question}))
    system_parts = [
        str(params.get("systemPrompt") or ""),
        str(replace_variable(prompt_template, {"quote": quote_text}))
        if use_quotes and quote_role == "system"
        else "",
    ]
    system_prompt = SYSTEM_PROMPT_SEPARATOR.join(part for part in system_parts if part)
    messages = [
        *([{"role": "system", "content": system_prompt}] if system_prompt else []),
        *chat_items_to_messages(chat_histories),
        {"role": "user", "content": user_text},
    ]
    stream_answer = params.get("isResponseAnswerText", True) is not False
    show_reasoning = params.get("aiChatReasoning", True) is not False and model.config.reasoning
    request: dict[str, Any] = {}
    if params.get("temperature") is not None:
        request["temperature"] = params["temperature"]
    if params.get("maxToken"):
        request["max_tokens"] = min(int(params["maxToken"]), model.config.max_response)
    stream = model.stream(messages, **request)
    async with stream:
        async for event in stream:
            if isinstance(event, TextDelta) and stream_answer and event.text:
                ctx.emit(AnswerEvent(text=event.text, node_id=ctx.node_id))
            elif isinstance(event, ReasoningDelta) and show_reasoning and event.text:
                ctx.emit(AnswerEvent(text="", reasoning=event.text, node_id=ctx.node_id))
    result = stream.result
    if result is None or (not result.content and not result.reasoning):
        return node_error("The model returned an empty response")
    answer = result.content.strip()
    usage = result.usage
    points = model.config.price(usage.input_tokens, usage.output_tokens)
    history = [
        *chat_histories,
        {"obj": "Human", "value": [{"type": "text", "text": {"content": user_text}}]},
        {"obj": "AI", "value": [{"type": "text", "text": {"content": answer}}]},
    ]
    return DispatchResponse(
        data={
            NodeOutputKey.answerText: answer,
            NodeOutputKey.reasoningText: result.reasoning,
            "history": history,
        },
        answer_text=answer if stream_answer else None,
        reasoning_text=result.reasoning if show_reasoning else None,
        response_data={
            "totalPoints": points,
            "model": model.config.display_name,
            "inputTokens": usage.input_tokens,
            "outputTokens": usage.output_tokens,
            "query": question,
            "maxToken": request.get("max_tokens"),
            "reasoningText": result.reasoning,
            "historyPreview": _history_preview([*messages, {"role": "assistant", "content": answer}]),
            "contextTotalLen": len(messages) + 1,
            "finishReason": result.finish_reason,
        },
        node_dispatch_usages=[
            {
                "moduleName": ctx.node.name,
                "totalPoints": points,
                "model": model.config.display_name,
                "inputTokens": usage.input_tokens,
                "outputTokens": usage.output_tokens,
            }
        ],
        tool_responses=answer,
    )
