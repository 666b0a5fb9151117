"""Use cases of a team's tool sets: create, update, list a server's tools, try one tool, show a set
(the storage shape and the runtime are in :mod:`fathom.chat.team_tools`)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
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


@dataclass(frozen=True)
class McpServerSpec:
    """An MCP server as a request gives it (FastGPT's ``url`` | ``command`` + ``args``, ``headerSecret``,
    ``toolList``): ``url`` (streamable HTTP) or ``command`` + ``args`` (stdio), one of the two; None is
    absent. ``header_secret`` and ``tool_list`` are checked here, as sent."""

    url: str | None = None
    command: str | None = None
    args: Sequence[str | int | float] | None = None
    header_secret: Any = None
    tool_list: Any = None


@dataclass(frozen=True)
class HttpToolSetSpec:
    """An HTTP tool set's configuration as a request gives it (``baseUrl``, ``apiSchemaStr``: an OpenAPI
    document, ``customHeaders``: a JSON object as text, ``headerSecret``); None is absent."""

    base_url: str | None = None
    api_schema_str: str | None = None
    custom_headers: str | None = None
    header_secret: Any = None


@dataclass(frozen=True)
class ToolSetProfile:
    """A new tool set's name (required), intro and avatar."""

    name: str
    intro: str | None = None
    avatar: str | None = None


class ToolSetService:
    """Create, update, inspect and try a team's tool sets (callers check permissions first)."""

    def __init__(self, apps: AppRepository, runtime: ToolSetRuntime) -> None:
        self.apps = apps
        self.runtime = runtime

    def _mcp_config(self, server: McpServerSpec, stored: ToolSetConfig | None) -> ToolSetConfig:
        command = (server.command or "").strip()
        url = (server.url or "").strip()
        if bool(command) == bool(url):
            raise _invalid("url: give the MCP server's url (streamable HTTP) or a command (stdio), not both")
        if command:
            self.runtime.stdio.check(command)
        headers = seal_headers(
            parse_header_secret(server.header_secret),
            stored.header_secret if stored else {},
            self.runtime.box,
        )
        return ToolSetConfig(
            kind=MCP_TYPE,
            tool_list=parse_tool_list(server.tool_list),
            header_secret=headers,
            url=url,
            command=command,
            args=[str(a) for a in server.args or []],
        )

    async def _store(
        self, team_id: str, kind: str, profile: ToolSetProfile, config: ToolSetConfig
    ) -> AppRecord:
        name = profile.name.strip()
        if not name:
            raise _invalid("name: must not be empty")
        avatar = profile.avatar or ""
        draft = toolset_draft(name, avatar, config)
        app = await self.apps.create_app(team_id, name, type=kind, intro=profile.intro or "", draft=draft)
        if avatar:
            app = await self.apps.update_app(team_id, app.id, avatar=avatar)
        return app

    async def create(
        self, team_id: str, profile: ToolSetProfile, spec: McpServerSpec | HttpToolSetSpec
    ) -> AppRecord:
        """``mcpTools/create`` (an :class:`McpServerSpec`; an empty ``toolList`` is filled from the
        server's own list) or ``httpTools/create`` (an :class:`HttpToolSetSpec`: FastGPT creates an empty
        set, filled by update; Fathom also takes its configuration at once)."""
        if isinstance(spec, HttpToolSetSpec):
            return await self._store(team_id, HTTP_TYPE, profile, self._http_config(spec, None))
        config = self._mcp_config(spec, None)
        if not config.tool_list:
            config.tool_list = await self.runtime.list_mcp_tools(config)
        return await self._store(team_id, MCP_TYPE, profile, config)

    def _http_config(self, spec: HttpToolSetSpec, stored: ToolSetConfig | None) -> ToolSetConfig:
        config = ToolSetConfig(
            kind=HTTP_TYPE,
            base_url=spec.base_url or "",
            api_schema_str=spec.api_schema_str or "",
            custom_headers=spec.custom_headers or "",
            header_secret=seal_headers(
                parse_header_secret(spec.header_secret),
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

    async def update(self, team_id: str, app_id: str, spec: McpServerSpec | HttpToolSetSpec) -> AppRecord:
        """``mcpTools/update`` / ``httpTools/update``: replace the configuration of a set of that kind
        (another kind of app is refused as :meth:`get` refuses it)."""
        if isinstance(spec, HttpToolSetSpec):
            app, stored = await self.get(team_id, app_id, HTTP_TYPE)
            config = self._http_config(spec, stored)
        else:
            app, stored = await self.get(team_id, app_id, MCP_TYPE)
            config = self._mcp_config(spec, stored)
            if not config.tool_list:
                config.tool_list = await self.runtime.list_mcp_tools(config)
        return await self.apps.update_app(team_id, app_id, draft=toolset_draft(app.name, app.avatar, config))

    async def get_tools(self, server: McpServerSpec) -> list[dict[str, Any]]:
        """``mcpTools/getTools``: the tools an MCP server lists, before registering it."""
        return await self.runtime.list_mcp_tools(self._mcp_config(server, None))

    async def run_tool(
        self,
        team_id: str,
        tool_name: str,
        params: Mapping[str, Any] | None,
        *,
        app_id: str | None = None,
        server: McpServerSpec | None = None,
    ) -> Any:
        """``runTool``: one call of a tool of a stored set (``app_id``) or of an unsaved MCP server."""
        tool_name = tool_name.strip()
        if not tool_name:
            raise _invalid("toolName: is required")
        params = params or {}
        if app_id:
            _, config = await self.get(team_id, app_id)
        else:
            config = self._mcp_config(server or McpServerSpec(), None)
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


__all__ = ["HttpToolSetSpec", "McpServerSpec", "ToolSetProfile", "ToolSetService"]
