"""Use cases of a team's tool sets: create, update, list a server's tools, try one tool, show a set
(the storage shape and the runtime are in :mod:`fathom.chat.team_tools`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from fathom.chat.errors import ChatError
from fathom.chat.team_tools import (
    HTTP_TYPE,
    MCP_TYPE,
    TOOL_SET_TYPES,
    ToolSetConfig,
    ToolSetRuntime,
    masked_headers,
    parse_custom_headers,
    parse_header_secret,
    parse_tool_list,
    seal_headers,
    toolset_draft,
)
from fathom.store.protocols import AppRecord, AppRepository, NotFound
from fathom.tools import run_tool


def _invalid(message: str) -> ChatError:
    return ChatError(message, http_status=400, status_text="invalidParams")


class ToolSetService:
    """Create, update, inspect and try a team's tool sets (callers check permissions first)."""

    def __init__(self, apps: AppRepository, runtime: ToolSetRuntime) -> None:
        self.apps = apps
        self.runtime = runtime

    def _mcp_config(self, values: Mapping[str, Any], stored: ToolSetConfig | None) -> ToolSetConfig:
        command = str(values.get("command") or "").strip()
        url = str(values.get("url") or "").strip()
        if bool(command) == bool(url):
            raise _invalid("url: give the MCP server's url (streamable HTTP) or a command (stdio), not both")
        if command:
            self.runtime.stdio.check(command)
        args = values.get("args") or []
        if not isinstance(args, list):
            raise _invalid("args: must be a list of strings")
        headers = seal_headers(
            parse_header_secret(values.get("headerSecret")),
            stored.header_secret if stored else {},
            self.runtime.box,
        )
        return ToolSetConfig(
            kind=MCP_TYPE,
            tool_list=parse_tool_list(values.get("toolList")),
            header_secret=headers,
            url=url,
            command=command,
            args=[str(a) for a in args],
        )

    async def _store(
        self, team_id: str, kind: str, values: Mapping[str, Any], config: ToolSetConfig
    ) -> AppRecord:
        name = str(values.get("name") or "").strip()
        if not name:
            raise _invalid("name: must not be empty")
        avatar = str(values.get("avatar") or "")
        draft = toolset_draft(name, avatar, config)
        app = await self.apps.create_app(
            team_id, name, type=kind, intro=str(values.get("intro") or ""), draft=draft
        )
        if avatar:
            app = await self.apps.update_app(team_id, app.id, avatar=avatar)
        return app

    async def create_mcp(self, team_id: str, values: Mapping[str, Any]) -> AppRecord:
        """``mcpTools/create``: ``{name, url | command+args, headerSecret, toolList}``; an empty
        ``toolList`` is filled from the server's own list."""
        config = self._mcp_config(values, None)
        if not config.tool_list:
            config.tool_list = await self.runtime.list_mcp_tools(config)
        return await self._store(team_id, MCP_TYPE, values, config)

    async def create_http(self, team_id: str, values: Mapping[str, Any]) -> AppRecord:
        """``httpTools/create``: an empty HTTP tool set (``{name, intro, avatar}``), filled by update;
        Fathom also takes ``baseUrl``, ``apiSchemaStr``, ``customHeaders`` and ``headerSecret`` at once."""
        config = self._http_config(values, None)
        return await self._store(team_id, HTTP_TYPE, values, config)

    def _http_config(self, values: Mapping[str, Any], stored: ToolSetConfig | None) -> ToolSetConfig:
        config = ToolSetConfig(
            kind=HTTP_TYPE,
            base_url=str(values.get("baseUrl") or ""),
            api_schema_str=str(values.get("apiSchemaStr") or ""),
            custom_headers=str(values.get("customHeaders") or ""),
            header_secret=seal_headers(
                parse_header_secret(values.get("headerSecret")),
                stored.header_secret if stored else {},
                self.runtime.box,
            ),
        )
        parse_custom_headers(config.custom_headers)
        if config.api_schema_str.strip():
            config.tool_list = self.runtime.http_tool_list(config)
        return config

    async def get(
        self, team_id: str, app_id: str, kind: str | None = None
    ) -> tuple[AppRecord, ToolSetConfig]:
        try:
            app = await self.apps.get_app(team_id, app_id)
        except NotFound:
            raise ChatError(
                f"tool set {app_id} not found", http_status=404, status_text="appUnExist"
            ) from None
        if app.type not in TOOL_SET_TYPES or (kind is not None and app.type != kind):
            wanted = "an MCP tool set" if kind == MCP_TYPE else "an HTTP tool set" if kind else "a tool set"
            raise _invalid(f"appId: app {app_id} is a {app.type}, not {wanted}")
        return app, ToolSetConfig.of_app(app)

    async def update(self, team_id: str, app_id: str, values: Mapping[str, Any]) -> AppRecord:
        """``mcpTools/update`` / ``httpTools/update``: replace the configuration."""
        app, stored = await self.get(team_id, app_id)
        if app.type == MCP_TYPE:
            config = self._mcp_config(values, stored)
            if not config.tool_list:
                config.tool_list = await self.runtime.list_mcp_tools(config)
        else:
            config = self._http_config(values, stored)
        return await self.apps.update_app(team_id, app_id, draft=toolset_draft(app.name, app.avatar, config))

    async def get_tools(self, values: Mapping[str, Any]) -> list[dict[str, Any]]:
        """``mcpTools/getTools``: the tools an MCP server lists, before registering it."""
        return await self.runtime.list_mcp_tools(self._mcp_config(values, None))

    async def run_tool(self, team_id: str, values: Mapping[str, Any]) -> Any:
        """``runTool``: one call of a tool of a stored set (``appId``) or of an unsaved MCP server."""
        tool_name = str(values.get("toolName") or "").strip()
        if not tool_name:
            raise _invalid("toolName: is required")
        params = values.get("params") or {}
        if not isinstance(params, Mapping):
            raise _invalid("params: must be an object")
        if values.get("appId"):
            _, config = await self.get(team_id, str(values["appId"]))
        else:
            config = self._mcp_config(values, None)
            config.tool_list = await self.runtime.list_mcp_tools(config)
        try:
            definitions = await self.runtime.definitions(config, [tool_name])
        except LookupError as exc:
            raise _invalid(f"toolName: {exc}") from None
        call = {
            "id": "runTool",
            "type": "function",
            "function": {"name": definitions[0].name, "arguments": json.dumps(dict(params))},
        }
        result = await run_tool(call, [], definitions)
        if result.error_message:
            raise ChatError(result.response or result.error_message, http_status=400, status_text="toolError")
        try:
            return json.loads(result.response)
        except ValueError:
            return result.response

    def view(self, app: AppRecord, config: ToolSetConfig) -> dict[str, Any]:
        """The set's configuration as the API returns it (header secrets masked)."""
        wire = config.wire()
        wire["headerSecret"] = masked_headers(config.header_secret, self.runtime.box)
        return wire


__all__ = ["ToolSetService"]
