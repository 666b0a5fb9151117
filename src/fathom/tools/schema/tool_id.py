"""Tool id rules (spec §1.10, SRC `packages/global/core/app/tool/utils.ts`): `splitCombineToolId`.

- no `-`: a personal app id;
- `systemTool-<id>`, `commercial-<id>`: the whole id is the plugin id;
- `mcp-<parentId>/<toolName>`, `http-<...>`: the plugin id is the part after the first `-`;
- legacy `community-<x>` and `commercial-dalle3` map to `systemTool-<x>`.
"""

from __future__ import annotations

from dataclasses import dataclass

from fathom.tools.schema.constants import AppToolSource

__all__ = ["ToolIdParts", "split_combine_tool_id"]


@dataclass(frozen=True, slots=True)
class ToolIdParts:
    """`{source, pluginId}` of a combined tool id."""

    source: str
    plugin_id: str


def split_combine_tool_id(tool_id: str) -> ToolIdParts:
    """Split a combined tool id into source and plugin id; `ValueError('pluginId not found')` when the
    source or the rest is empty."""
    if "-" not in tool_id:
        return ToolIdParts(AppToolSource.personal, tool_id)
    source, _, rest = tool_id.partition("-")
    if not source or not rest:
        raise ValueError("pluginId not found")
    if source == AppToolSource.community or tool_id == "commercial-dalle3":
        return ToolIdParts(AppToolSource.systemTool, f"{AppToolSource.systemTool}-{rest}")
    if source in (AppToolSource.mcp, AppToolSource.http):
        return ToolIdParts(source, rest)
    return ToolIdParts(source, tool_id)
