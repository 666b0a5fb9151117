"""The ``read_files`` and ``dataset_search`` system tools (spec §3.7.4, §3.7.5).

Both executors come from the runtime (the adapter reads files; the knowledge layer searches); a
missing executor answers with the exact "executor is not available" reply.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from fathom.agent.types import DatasetSearchToolConfig, ReadFileToolConfig, coerce_tool_result
from fathom.tools import ToolResult, error_text

READ_FILES = "read_files"
LEGACY_READ_FILES = "file_read"
DATASET_SEARCH = "dataset_search"
READ_FILE_NOT_AVAILABLE = "Read file executor is not available."
DATASET_SEARCH_NOT_AVAILABLE = "Dataset search executor is not available."


def read_files_schema(max_file_amount: int) -> dict[str, Any]:
    """``read_files{urls: string[]}`` (newest variant of the DRIFT in spec §0)."""
    return {
        "type": "function",
        "function": {
            "name": READ_FILES,
            "description": "Read the text of files the user attached to the conversation.",
            "parameters": {
                "type": "object",
                "properties": {
                    "urls": {
                        "type": "array",
                        "items": {"type": "string"},
                        "minItems": 1,
                        "maxItems": max_file_amount,
                        "description": "Absolute HTTP(S) file URLs",
                    }
                },
                "required": ["urls"],
            },
        },
    }


DATASET_SEARCH_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": DATASET_SEARCH,
        "description": "Search the knowledge bases available to this conversation.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "One or more search queries.",
                }
            },
        },
    },
}


def _args(call: dict[str, Any]) -> dict[str, Any] | str:
    raw = (call.get("function") or {}).get("arguments") or ""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return "Tool arguments are not valid JSON. Send the arguments as one JSON object."
    return value if isinstance(value, dict) else "Tool arguments must be a JSON object."


def _is_absolute_http(url: str) -> bool:
    lowered = url.strip().lower()
    return lowered.startswith(("http://", "https://")) and len(lowered.split("://", 1)[1]) > 0


def _patch_dataset_search_args(args: dict[str, Any], current_input_files: Sequence[str]) -> dict[str, Any]:
    """Normalise ``query`` to a trimmed non-empty string list and append this turn's absolute http(s)
    file URLs (relative paths are never added)."""
    query = args.get("query")
    items = [query] if isinstance(query, str) else list(query) if isinstance(query, list) else []
    queries = [
        str(item).strip() for item in items if isinstance(item, str | int | float) and str(item).strip()
    ]
    for url in current_input_files:
        if isinstance(url, str) and _is_absolute_http(url) and url.strip() not in queries:
            queries.append(url.strip())
    return {**args, "query": queries}


async def _call(execute: Any, args: dict[str, Any], call: dict[str, Any]) -> ToolResult:
    try:
        result = coerce_tool_result(await execute(args, call))
    except Exception as exc:
        text = f"Tool error: {error_text(exc)}"
        return ToolResult(response=text, error_message=text)
    return result


async def run_read_files(call: dict[str, Any], config: ReadFileToolConfig | None) -> ToolResult:
    """Run ``read_files`` (or legacy ``file_read{file_indexes}``) through the runtime's reader."""
    if config is None or config.execute is None:
        return ToolResult.failure(READ_FILE_NOT_AVAILABLE)
    args = _args(call)
    if isinstance(args, str):
        return ToolResult.failure(args)
    urls = args.get("urls", args.get("ids", args.get("file_indexes")))
    if isinstance(urls, str):
        urls = [urls]
    if not isinstance(urls, list) or not urls:
        return ToolResult.failure("Invalid read_files arguments: urls must be a non-empty array.")
    if len(urls) > config.max_file_amount:
        return ToolResult.failure(
            f"Invalid read_files arguments: at most {config.max_file_amount} file(s) can be read at once."
        )
    return await _call(config.execute, {**args, "urls": urls}, call)


async def run_dataset_search(call: dict[str, Any], config: DatasetSearchToolConfig | None) -> ToolResult:
    """Run ``dataset_search`` with patched arguments through the runtime's search executor."""
    if config is None or config.execute is None:
        return ToolResult.failure(DATASET_SEARCH_NOT_AVAILABLE)
    args = _args(call)
    if isinstance(args, str):
        return ToolResult.failure(args)
    return await _call(config.execute, _patch_dataset_search_args(args, config.current_input_files), call)
