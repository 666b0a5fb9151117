"""The ``sandbox_*`` system tools, dispatched to a runtime-provided sandbox client (spec §3.7.3).

The kernel never imports a sandbox implementation: the runtime lends an object with (some of) the
methods named in :data:`SANDBOX_METHODS`. Arguments are parsed as JSON and checked against each tool's
schema before dispatch (``fathom.tools.run_tool``); a failure's text is also the ``errorMessage``.
"""

from __future__ import annotations

from typing import Any

from fathom.tools import ToolContext, ToolDefinition, ToolResult, run_tool

SANDBOX_NOT_AVAILABLE = "Sandbox executor is not available."


def _obj(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


_S = {"type": "string"}
_I = {"type": "integer", "minimum": 0}

SANDBOX_TOOLS: dict[str, tuple[str, str, dict[str, Any]]] = {
    # name: (client method, description, parameters)
    "sandbox_shell": (
        "shell",
        "Run a shell command in the sandbox working directory and return its output.",
        _obj({"command": _S, "timeout": {"type": "number", "exclusiveMinimum": 0}}, ["command"]),
    ),
    "sandbox_read_file": (
        "read_file",
        "Read a text file from the sandbox; offset (first line, 0-based) and limit (lines) page it.",
        _obj({"path": _S, "offset": _I, "limit": {"type": "integer", "minimum": 1}}, ["path"]),
    ),
    "sandbox_write_file": (
        "write_file",
        "Create or overwrite a file in the sandbox.",
        _obj({"path": _S, "content": _S}, ["path", "content"]),
    ),
    "sandbox_edit_file": (
        "edit_file",
        "Replace old_string with new_string in a sandbox file (replace_all for every occurrence).",
        _obj(
            {"path": _S, "old_string": _S, "new_string": _S, "replace_all": {"type": "boolean"}},
            ["path", "old_string", "new_string"],
        ),
    ),
    "sandbox_grep": (
        "grep",
        "Search file contents in the sandbox for a regular expression.",
        _obj({"pattern": _S, "path": _S, "include": _S}, ["pattern"]),
    ),
    "sandbox_find": (
        "find",
        "Find files in the sandbox whose path matches a glob pattern.",
        _obj({"pattern": _S, "path": _S}, ["pattern"]),
    ),
    "sandbox_ls": ("ls", "List a sandbox directory.", _obj({"path": _S}, [])),
    "sandbox_get_file_url": (
        "get_file_url",
        "Get a URL the user can open for a file in the sandbox.",
        _obj({"path": _S}, ["path"]),
    ),
}
SANDBOX_TOOL_NAMES = tuple(SANDBOX_TOOLS)
SANDBOX_METHODS = tuple(method for method, _, _ in SANDBOX_TOOLS.values())


def sandbox_tool_schemas() -> list[dict[str, Any]]:
    """The model-visible schemas, in the spec's order."""
    return [
        {"type": "function", "function": {"name": name, "description": desc, "parameters": params}}
        for name, (_, desc, params) in SANDBOX_TOOLS.items()
    ]


def _definition(name: str, client: Any) -> ToolDefinition:
    method, description, parameters = SANDBOX_TOOLS[name]

    async def execute(ctx: ToolContext) -> Any:
        fn = getattr(client, method, None)
        if fn is None:
            return ToolResult.failure(f"Sandbox tool {name} is not supported by this sandbox.")
        value = fn(**{k: v for k, v in dict(ctx.params).items() if v is not None})
        if hasattr(value, "__await__"):
            value = await value
        return value

    return ToolDefinition(name=name, description=description, parameters=parameters, execute=execute)


async def run_sandbox_tool(call: dict[str, Any], messages: list[dict[str, Any]], client: Any) -> ToolResult:
    """``runSandboxTools``: JSON parse + schema check + dispatch to ``client``; never raises."""
    name = str((call.get("function") or {}).get("name") or "")
    if client is None:
        return ToolResult.failure(SANDBOX_NOT_AVAILABLE)
    if name not in SANDBOX_TOOLS:
        return ToolResult.failure(f"Call tool not found: {name}")
    return await run_tool(call, messages, [_definition(name, client)])
