"""A JSON-Schema tool validates each call against a schema compiled once: valid arguments pass, invalid
ones still get every error, and a replaced ``parameters`` schema takes effect on the next call."""

from __future__ import annotations

import json
from typing import Any

from fathom.tools import ToolContext, ToolDefinition, run_tool

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100},
        "mode": {"type": "string", "enum": ["fast", "deep"]},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["query", "limit"],
    "additionalProperties": False,
}


async def _echo(ctx: ToolContext) -> str:
    return json.dumps(ctx.params, sort_keys=True)


def _call(arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "c1",
        "type": "function",
        "function": {"name": "search", "arguments": json.dumps(arguments)},
    }


async def test_valid_arguments_reach_the_tool_and_invalid_ones_get_every_error() -> None:
    tool = ToolDefinition(name="search", description="Search", parameters=SCHEMA, execute=_echo)
    ok = await run_tool(_call({"query": "q", "limit": 5, "tags": ["a"]}), [], [tool])
    assert json.loads(str(ok.response)) == {"limit": 5, "query": "q", "tags": ["a"]}

    bad = await run_tool(_call({"query": "", "limit": 0, "mode": "slow", "tags": [1], "x": 1}), [], [tool])
    text = str(bad.response)
    for error in (
        "/query must NOT have fewer than 1 characters",
        "/limit must be >= 1",
        "/mode must be equal to one of the allowed values",
        "/tags/0 must be string",
        "must NOT have additional properties",
    ):
        assert error in text, text


async def test_a_replaced_parameters_schema_applies_to_the_next_call() -> None:
    tool = ToolDefinition(name="search", description="Search", parameters=SCHEMA, execute=_echo)
    arguments = {"query": "q", "limit": 500}
    assert "/limit must be <= 100" in str((await run_tool(_call(arguments), [], [tool])).response)
    tool.parameters = {**SCHEMA, "properties": {**SCHEMA["properties"], "limit": {"type": "integer"}}}
    accepted = await run_tool(_call(arguments), [], [tool])
    assert json.loads(str(accepted.response)) == arguments
