"""``contentExtract``: the model extracts structured fields from a text.

Each ``extractKeys`` item (``{key, desc, valueType, required, defaultValue, enum}``) becomes a JSON
Schema property. Function-calling models get a forced ``request_function`` tool with that schema; other
models (and a reply without the tool call) get FastGPT's prompt mode: the schema in the system
prompt, and the JSON object between the first ``{`` and the last ``}`` of the reply (JSON5 tolerated).
Unknown keys and empty strings are dropped, required keys missing are filled with their default (or
``""``); ``success`` is true when every declared key is present.
"""

from __future__ import annotations

import json
from typing import Any

from fathom.llm import ChatModel, CompletionResult
from fathom.workflow.constants import FlowNodeType
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
from fathom.workflow.values import parse_json5

EXTRACT_TOOL_NAME = "request_function"

VALUE_TYPE_SCHEMA: dict[str, dict[str, Any]] = {
    "string": {"type": "string"},
    "number": {"type": "number"},
    "boolean": {"type": "boolean"},
    "object": {"type": "object"},
    "arrayString": {"type": "array", "items": {"type": "string"}},
    "arrayNumber": {"type": "array", "items": {"type": "number"}},
    "arrayBoolean": {"type": "array", "items": {"type": "boolean"}},
    "arrayObject": {"type": "array", "items": {"type": "object"}},
}


def _extract_schema(keys: list[dict[str, Any]]) -> dict[str, Any]:
    """JSON Schema properties of the fields (string when the value type has no schema)."""
    properties: dict[str, Any] = {}
    for item in keys:
        schema = dict(VALUE_TYPE_SCHEMA.get(str(item.get("valueType") or "string"), {"type": "string"}))
        schema["description"] = item.get("desc") or ""
        if item.get("enum"):
            schema["enum"] = [line for line in str(item["enum"]).split("\n") if line]
        properties[str(item.get("key"))] = schema
    return properties


def _extract_system_prompt(description: str, memory: str, schema: str) -> str:
    """Prompt mode: the task, the last extraction and the schema; the reply must be one JSON object."""
    parts = [
        "## Role\nYou extract information from the user's text into JSON.",
    ]
    if description:
        parts.append(f"## Requirements\n{description}")
    if memory:
        parts.append(f"## Last extraction\n{memory}")
    parts.append(f"## JSON Schema of the fields\n{schema}")
    parts.append(
        "## Output\nReply with one JSON object whose keys are the schema's properties. "
        "Leave out a field you cannot find; do not invent values."
    )
    return "\n\n".join(parts)


def _slice_json_object(text: str) -> str:
    """The text from the first ``{`` to the last ``}`` (empty when there is none)."""
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if start != -1 and end > start else ""


def _parse_extraction(result: CompletionResult) -> dict[str, Any]:
    """Arguments of the extract tool call, else the JSON object in the reply text; ``{}`` otherwise."""
    for call in result.tool_calls:
        if call.name == EXTRACT_TOOL_NAME:
            try:
                args = call.parsed_arguments()
            except ValueError:
                args = None
            if isinstance(args, dict):
                return args
    raw = _slice_json_object(result.content or "")
    if not raw:
        return {}
    try:
        value = parse_json5(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _clean_extraction(arg: dict[str, Any], keys: list[dict[str, Any]]) -> tuple[dict[str, Any], bool]:
    """Drop unknown keys and empty strings, fill missing required keys; ``success`` = all keys present."""
    declared = {str(item.get("key")): item for item in keys}
    cleaned = {k: v for k, v in arg.items() if k in declared and v != ""}
    for key, item in declared.items():
        if item.get("required") and key not in cleaned:
            cleaned[key] = item.get("defaultValue") or ""
    success = all(key in cleaned for key in declared)
    return cleaned, success


async def _complete(
    model: ChatModel, messages: list[dict[str, Any]], properties: dict[str, Any], required: list[str]
) -> CompletionResult:
    if model.config.function_calling:
        tool = {
            "type": "function",
            "function": {
                "name": EXTRACT_TOOL_NAME,
                "description": "Extract the fields from the text",
                "parameters": {"type": "object", "properties": properties, "required": required},
            },
        }
        return await model.complete(
            messages,
            tools=[tool],
            tool_choice={"type": "function", "function": {"name": EXTRACT_TOOL_NAME}},
        )
    return await model.complete(messages)


@register_node(FlowNodeType.contentExtract)
async def dispatch_content_extract(ctx: NodeContext) -> DispatchResponse:
    """Inputs ``model``, ``history``, ``content``, ``description``, ``extractKeys`` → outputs
    ``success``, ``fields`` (the JSON text) and one output per extracted key."""
    content = str(ctx.params.get("content") or "")
    keys: list[dict[str, Any]] = [k for k in ctx.params.get("extractKeys") or [] if isinstance(k, dict)]
    if not content:
        return node_error("Input is empty")
    try:
        model = resolve_model(ctx, "content extraction")
    except ModelUnavailableError as exc:
        return node_error(str(exc))
    histories = node_histories(ctx)
    key = memory_key(ctx)
    memory = last_memory(histories, key)
    description = str(ctx.params.get("description") or "")
    properties = _extract_schema(keys)
    system = _extract_system_prompt(
        description,
        json.dumps(memory, ensure_ascii=False) if memory else "",
        json.dumps(properties, ensure_ascii=False),
    )
    required = [str(item.get("key")) for item in keys if item.get("required")]
    try:
        result = await _complete(model, build_messages(system, histories, content), properties, required)
    except Exception as exc:
        return node_error(str(exc) or exc.__class__.__name__)
    arg, success = _clean_extraction(_parse_extraction(result), keys)
    billed = bill(ctx, model, result)
    return DispatchResponse(
        data={"success": success, "fields": json.dumps(arg, ensure_ascii=False), **arg},
        system_memories={key: arg},
        response_data={
            "totalPoints": billed.points,
            "model": billed.model_name,
            "query": content,
            "inputTokens": billed.input_tokens,
            "outputTokens": billed.output_tokens,
            "extractDescription": description,
            "extractResult": arg,
            "contextTotalLen": len(histories) + 2,
        },
        node_dispatch_usages=[billed.usage],
        tool_responses=arg,
    )
