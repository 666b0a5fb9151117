"""The ``tool`` / ``toolSet`` node resolver of one run: a team's stored tool sets as runnable tools.

A ``tool`` node names one tool of a set (``toolConfig.mcpTool.toolId = "mcp-<setId>/<name>"``, or
``httpTool`` with ``http-``); a ``toolSet`` node names a whole set (``toolConfig.mcpToolSet`` /
``httpToolSet`` with a ``toolId``, else the node's ``pluginId``). The set is looked up in the running
team only (another team's set is not found) and the app's owner and the running member must both be
allowed to read it, as for child apps. What runs is always the stored configuration: URLs, commands and
credentials in a workflow's JSON are never used, so a shared workflow cannot carry or redirect a team's
secrets.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fathom.chat.apps import ChildAppReader
from fathom.chat.run_access import RunReader
from fathom.chat.team_tools import TOOL_SET_TYPES, ToolSetConfig, ToolSetRuntime
from fathom.store.protocols import AppRepository, NotFound
from fathom.tools import ToolDefinition, split_combine_tool_id
from fathom.tools.schema.constants import AppToolSource
from fathom.workflow.nodes.tool_node import ToolResolver

_SINGLE_KEYS = ("mcpTool", "httpTool")
_SET_KEYS = ("mcpToolSet", "httpToolSet")


class ToolSetNotFound(LookupError):
    """The node names no tool set of the running team (or one the member may not read)."""


@dataclass(frozen=True)
class ToolReference:
    """Which set, and which of its tools (``None``: all of them)."""

    set_id: str
    tool_name: str | None


def _tool_reference(tool_config: Any, plugin_id: str | None) -> ToolReference:
    """Where a ``tool`` / ``toolSet`` node points (FastGPT's tool id rule, ``splitCombineToolId``)."""
    config = tool_config if isinstance(tool_config, Mapping) else {}
    for key in _SINGLE_KEYS:
        entry = config.get(key)
        if isinstance(entry, Mapping) and entry.get("toolId"):
            return _split(str(entry["toolId"]), single=True)
    for key in _SET_KEYS:
        entry = config.get(key)
        if isinstance(entry, Mapping) and entry.get("toolId"):
            return _split(str(entry["toolId"]), single=False)
    if plugin_id:
        return _split(plugin_id, single=False)
    raise ToolSetNotFound("The tool node names no tool: set toolConfig.mcpTool.toolId or the node's pluginId")


def _split(tool_id: str, *, single: bool) -> ToolReference:
    try:
        parts = split_combine_tool_id(tool_id)
    except ValueError as exc:
        raise ToolSetNotFound(f"Tool id {tool_id!r} is not valid: {exc}") from None
    if parts.source not in (AppToolSource.mcp, AppToolSource.http, AppToolSource.personal):
        raise ToolSetNotFound(f"Tool {tool_id!r} is not a team tool set (source {parts.source})")
    set_id, _, name = parts.plugin_id.partition("/")
    if single and not name:
        raise ToolSetNotFound(f"Tool id {tool_id!r} names no tool: expected mcp-<setId>/<toolName>")
    return ToolReference(set_id, name or None)


class TeamToolResolver(ToolResolver):
    """Resolves tool nodes against the tool sets of ``team_id`` (see the module docstring)."""

    def __init__(
        self,
        apps: AppRepository,
        team_id: str,
        runtime: ToolSetRuntime,
        *,
        readers: tuple[RunReader, ...] = (),
        access: ChildAppReader | None = None,
    ) -> None:
        self.apps = apps
        self.team_id = team_id
        self.runtime = runtime
        self.readers = readers
        self.access = access

    async def resolve_tools(self, tool_config: Any, plugin_id: str | None) -> Sequence[ToolDefinition]:
        ref = _tool_reference(tool_config, plugin_id)
        try:
            app = await self.apps.get_app(self.team_id, ref.set_id)
        except NotFound:
            raise ToolSetNotFound(f"Tool set {ref.set_id} not found") from None
        if app.type not in TOOL_SET_TYPES:
            raise ToolSetNotFound(f"App {app.name} ({app.id}) is a {app.type}, not a tool set")
        for reader in self.readers if self.access is not None else ():
            if self.access is not None and not await self.access.can_read(reader.member_id, app.id):
                raise ToolSetNotFound(
                    f"No read permission on tool set {app.name} ({app.id}): {reader.label} may not read it; "
                    "ask its owner for read access, or remove the node"
                )
        names = None if ref.tool_name is None else [ref.tool_name]
        return await self.runtime.definitions(ToolSetConfig.of_app(app), names)


__all__ = ["TeamToolResolver", "ToolReference", "ToolSetNotFound"]
