"""Team tool sets: an MCP server or an OpenAPI/HTTP tool set registered once, as FastGPT stores them.

A tool set is an app of type ``toolSet`` (MCP) or ``httpToolSet`` (HTTP) whose draft holds one
``toolSet`` runtime node (FastGPT's ``getMCPToolSetRuntimeNode`` / ``getHTTPToolSetRuntimeNode``)::

    {"flowNodeType": "toolSet", "toolConfig": {"mcpToolSet": {"url", "headerSecret", "toolList"}}}
    {"flowNodeType": "toolSet", "toolConfig": {"httpToolSet": {"baseUrl", "apiSchemaStr",
                                                               "customHeaders", "headerSecret", "toolList"}}}

Header secrets are sealed by the :class:`SecretBox` before they are stored (``{secret, value: ""}``) and
are shown masked, never in clear. Fathom adds a stdio transport for MCP (``command`` + ``args``), allowed
only for commands the operator listed in ``FATHOM_MCP_STDIO_COMMANDS``: a team could otherwise run any
program on the server. The tools of a set are addressed FastGPT's way: ``mcp-<setId>/<toolName>`` and
``http-<setId>/<toolName>`` (``splitCombineToolId``).
"""

from __future__ import annotations

import json
import secrets as random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from fathom.chat.errors import ChatError
from fathom.security import SecretBox, mask_secret
from fathom.store.protocols import AppRecord
from fathom.tools import ToolDefinition, create_tool_http_client, get_tool_config_status
from fathom.tools.http_client import EgressGuardLike
from fathom.tools.schema.constants import FlowNodeInputType
from fathom.tools.schema.json_schema_to_nodeio import json_schema_to_node_inputs, json_schema_to_node_outputs
from fathom.tools.sources import (
    McpServer,
    McpToolError,
    McpToolInfo,
    McpToolSet,
    OpenApiSchemaError,
    OpenApiToolSet,
)

MCP_TYPE = "toolSet"
HTTP_TYPE = "httpToolSet"
TOOL_SET_TYPES = (MCP_TYPE, HTTP_TYPE)
_CONFIG_KEY = {MCP_TYPE: "mcpToolSet", HTTP_TYPE: "httpToolSet"}
_ID_PREFIX = {MCP_TYPE: "mcp", HTTP_TYPE: "http"}


def _invalid(message: str) -> ChatError:
    return ChatError(message, http_status=400, status_text="invalidParams")


@dataclass(frozen=True)
class StdioPolicy:
    """Which stdio commands an MCP tool set may start (exact program paths or names)."""

    commands: tuple[str, ...] = ()

    def check(self, command: str) -> None:
        if command not in self.commands:
            allowed = ", ".join(self.commands) or "none"
            raise _invalid(
                f"command: {command!r} is not an allowed stdio MCP command (allowed: {allowed}); an "
                "operator lists the programs a team may start in FATHOM_MCP_STDIO_COMMANDS"
            )


def parse_tool_list(value: Any, field_name: str = "toolList") -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _invalid(f"{field_name}: must be a list of tools ({{name, description, inputSchema}})")
    tools = []
    for index, item in enumerate(value):
        if not isinstance(item, Mapping) or not str(item.get("name") or "").strip():
            raise _invalid(f"{field_name}[{index}].name: every tool needs a name")
        schema = item.get("inputSchema")
        tools.append(
            {
                **dict(item),
                "name": str(item["name"]),
                "description": str(item.get("description") or ""),
                "inputSchema": dict(schema) if isinstance(schema, Mapping) else {"type": "object"},
            }
        )
    return tools


def parse_header_secret(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _invalid("headerSecret: must be an object {name: {value}} (Bearer / Basic / a header name)")
    entries: dict[str, Any] = {}
    for key, entry in value.items():
        if isinstance(entry, str):
            entry = {"value": entry, "secret": ""}
        if not isinstance(entry, Mapping):
            raise _invalid(f"headerSecret.{key}: must be {{value}} or a string")
        entries[str(key)] = {"value": str(entry.get("value") or ""), "secret": str(entry.get("secret") or "")}
    return entries


def seal_headers(new: Mapping[str, Any], stored: Mapping[str, Any], box: SecretBox) -> dict[str, Any]:
    """The header secrets to store: a new value is encrypted; a key sent back blank (as the masked
    detail shows it) keeps its stored secret; a key left out is removed."""
    sealed: dict[str, Any] = {}
    for key, entry in new.items():
        if entry.get("value"):
            sealed[key] = box.encrypt_secret_value(entry)
        elif isinstance(stored.get(key), Mapping) and stored[key].get("secret"):
            sealed[key] = dict(stored[key])
        elif entry.get("secret"):
            try:
                box.decrypt(entry["secret"])  # only a secret this server sealed is kept
            except ValueError as exc:
                raise _invalid(f"headerSecret.{key}.secret: {exc} Send the plain value instead.") from None
            sealed[key] = {"secret": entry["secret"], "value": ""}
    return sealed


def masked_headers(stored: Mapping[str, Any], box: SecretBox) -> dict[str, Any]:
    """Header secrets as the API shows them: no ciphertext, no value, a masked hint."""
    view: dict[str, Any] = {}
    for key, entry in stored.items():
        if not isinstance(entry, Mapping):
            continue
        try:
            plain = box.decrypt(str(entry.get("secret") or "")) if entry.get("secret") else ""
        except ValueError:
            plain = ""
        view[key] = {"secret": "", "value": "", "masked": mask_secret(plain) if plain else ""}
    return view


@dataclass
class ToolSetConfig:
    """The stored configuration of one tool set (what its runtime node's ``toolConfig`` holds)."""

    kind: str
    tool_list: list[dict[str, Any]] = field(default_factory=list)
    header_secret: dict[str, Any] = field(default_factory=dict)
    url: str = ""
    command: str = ""
    args: list[str] = field(default_factory=list)
    base_url: str = ""
    api_schema_str: str = ""
    custom_headers: str = ""

    def wire(self) -> dict[str, Any]:
        if self.kind == MCP_TYPE:
            data: dict[str, Any] = {"toolList": self.tool_list, "headerSecret": self.header_secret}
            if self.command:
                data.update({"transport": "stdio", "command": self.command, "args": self.args})
            else:
                data["url"] = self.url
            return data
        return {
            "toolList": self.tool_list,
            "baseUrl": self.base_url,
            "apiSchemaStr": self.api_schema_str,
            "customHeaders": self.custom_headers,
            "headerSecret": self.header_secret,
        }

    @classmethod
    def of_app(cls, app: AppRecord) -> ToolSetConfig:
        if app.type not in TOOL_SET_TYPES:
            raise LookupError(f"app {app.id} is a {app.type}, not a tool set")
        nodes = (app.draft or {}).get("nodes") or []
        node = nodes[0] if nodes and isinstance(nodes[0], Mapping) else {}
        data = (node.get("toolConfig") or {}).get(_CONFIG_KEY[app.type]) or {}
        return cls(
            kind=app.type,
            tool_list=list(data.get("toolList") or []),
            header_secret=dict(data.get("headerSecret") or {}),
            url=str(data.get("url") or ""),
            command=str(data.get("command") or ""),
            args=[str(a) for a in data.get("args") or []],
            base_url=str(data.get("baseUrl") or ""),
            api_schema_str=str(data.get("apiSchemaStr") or ""),
            custom_headers=str(data.get("customHeaders") or ""),
        )


def scrub_tool_set_nodes(nodes: Sequence[Any]) -> list[Any]:
    """A tool set's stored nodes as the app routes show and export them: every header secret blanked
    (neither ciphertext nor value leaves the server; ``getChildren`` shows a masked hint)."""
    scrubbed = []
    for node in nodes:
        if isinstance(node, Mapping) and isinstance(node.get("toolConfig"), Mapping):
            config = {}
            for key, entry in node["toolConfig"].items():
                if isinstance(entry, Mapping) and isinstance(entry.get("headerSecret"), Mapping):
                    blank = {name: {"secret": "", "value": ""} for name in entry["headerSecret"]}
                    entry = {**entry, "headerSecret": blank}
                config[key] = entry
            node = {**node, "toolConfig": config}
        scrubbed.append(node)
    return scrubbed


def toolset_draft(name: str, avatar: str, config: ToolSetConfig) -> dict[str, Any]:
    """The stored draft: one ``toolSet`` runtime node carrying the configuration."""
    node: dict[str, Any] = {
        "nodeId": random.token_hex(8),
        "flowNodeType": "toolSet",
        "name": name,
        "avatar": avatar,
        "intro": "MCP Tools" if config.kind == MCP_TYPE else "HTTP Tools",
        "toolConfig": {_CONFIG_KEY[config.kind]: config.wire()},
        "inputs": [],
        "outputs": [],
        "version": "",
    }
    return {"nodes": [node], "edges": [], "chatConfig": {}}


def parse_custom_headers(text: str) -> dict[str, str]:
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        raise _invalid("customHeaders: must be a JSON object of header names to values") from None
    if not isinstance(value, dict):
        raise _invalid("customHeaders: must be a JSON object of header names to values")
    return {str(k): str(v) for k, v in value.items()}


@dataclass
class ToolSetRuntime:
    """Builds runnable tools of a stored tool set: the MCP client or the OpenAPI tool set, with the
    decrypted headers, the egress guard for every URL and the stdio policy."""

    box: SecretBox
    guard: EgressGuardLike | None
    stdio: StdioPolicy

    def mcp(self, config: ToolSetConfig) -> McpToolSet:
        if config.command:
            self.stdio.check(config.command)
            server = McpServer(command=config.command, args=list(config.args))
        else:
            if not config.url:
                raise _invalid("url: an MCP tool set needs the server's streamable-HTTP url (or a command)")
            server = McpServer(url=config.url, headers=self.box.get_secret_value(config.header_secret))
        toolset = McpToolSet(server, guard=self.guard)
        toolset.tools = [
            McpToolInfo(str(t["name"]), str(t.get("description") or ""), dict(t.get("inputSchema") or {}))
            for t in config.tool_list
        ]
        return toolset

    def http(self, config: ToolSetConfig) -> OpenApiToolSet:
        if not config.api_schema_str.strip():
            raise _invalid("apiSchemaStr: the HTTP tool set has no OpenAPI document yet")
        try:
            return OpenApiToolSet(
                config.api_schema_str,
                client=create_tool_http_client(self.guard),
                base_url=config.base_url or None,
                headers=parse_custom_headers(config.custom_headers),
                header_secret=config.header_secret,
                secrets=self.box,
            )
        except OpenApiSchemaError as exc:
            raise _invalid(f"apiSchemaStr: {exc}") from None

    async def definitions(self, config: ToolSetConfig, names: Sequence[str] | None) -> list[ToolDefinition]:
        """The tools of the set (only ``names`` when given) through the shared tool-input runtime."""
        if config.kind == MCP_TYPE:
            toolset = self.mcp(config)
            if not toolset.tools:
                await toolset.load_tools()
            known = {t.name for t in toolset.tools}
            missing = [n for n in names or [] if n not in known]
            if missing:
                raise LookupError(f"MCP tool {missing[0]!r} is not in this tool set")
            return toolset.tool_definitions(names)
        http = self.http(config)
        definitions = http.tool_definitions()
        if names is None:
            return definitions
        chosen = [d for d in definitions if d.name in names]
        if len(chosen) != len(set(names)):
            raise LookupError(
                f"HTTP tool {sorted(set(names) - {d.name for d in chosen})[0]!r} is not in this set"
            )
        return chosen

    async def list_mcp_tools(self, config: ToolSetConfig) -> list[dict[str, Any]]:
        """The live tool list of an MCP server (``getTools``)."""
        toolset = self.mcp(replace(config, tool_list=[]))
        try:
            tools = await toolset.load_tools()
        except McpToolError as exc:
            raise ChatError(str(exc), http_status=400, status_text="mcpError") from None
        return [{"name": t.name, "description": t.description, "inputSchema": t.input_schema} for t in tools]

    def http_tool_list(self, config: ToolSetConfig) -> list[dict[str, Any]]:
        """The tools of an OpenAPI document, FastGPT's ``toolList`` shape."""
        http = self.http(config)
        return [
            {
                "name": tool.model_name,
                "description": tool.description,
                "path": tool.operation.path,
                "method": tool.operation.method.lower(),
                "inputSchema": tool.request_schema,
            }
            for tool in http.tools
        ]


def _generated(wire: dict[str, Any]) -> dict[str, Any]:
    """An input of a set's tool as the model fills it (FastGPT's ``allAgentGenerated`` for MCP and HTTP
    tools); the builder may still fix it in the editor (``selectedType`` of another render type)."""
    render_types = list(wire.get("renderTypeList") or [])
    if FlowNodeInputType.agentGenerated not in render_types:
        render_types.insert(0, FlowNodeInputType.agentGenerated)
    return {**wire, "renderTypeList": render_types, "selectedType": FlowNodeInputType.agentGenerated}


def child_tool_nodes(app: AppRecord, config: ToolSetConfig) -> list[dict[str, Any]]:
    """The set's tools as workflow ``tool`` nodes (``getChildren``), each with its inputs projected from
    the schema, its ``toolConfig`` id and whether it still needs configuration."""
    prefix = _ID_PREFIX[config.kind]
    key = "mcpTool" if config.kind == MCP_TYPE else "httpTool"
    nodes = []
    for tool in config.tool_list:
        schema = tool.get("inputSchema") or {"type": "object"}
        inputs = [
            _generated(i.model_dump(by_alias=True, exclude_unset=True))
            for i in json_schema_to_node_inputs(schema, prefix)
        ]
        outputs = [
            o.model_dump(by_alias=True, exclude_unset=True)
            for o in json_schema_to_node_outputs(tool.get("outputSchema") or {})
        ]
        outputs.append(
            {
                "id": "system_rawResponse",
                "key": "system_rawResponse",
                "label": "Raw response",
                "type": "static",
                "valueType": "any",
                "required": True,
            }
        )
        status = get_tool_config_status(inputs)
        nodes.append(
            {
                "nodeId": f"{app.id}{tool['name']}"[:64],
                "flowNodeType": "tool",
                "name": f"{app.name}/{tool['name']}",
                "avatar": app.avatar,
                "intro": tool.get("description") or "",
                "toolDescription": tool.get("description") or "",
                "toolConfig": {key: {"toolId": f"{prefix}-{app.id}/{tool['name']}"}},
                "jsonSchema": schema,
                "inputs": inputs,
                "outputs": outputs,
                "configStatus": {"needConfig": status.need_config, "status": status.status},
            }
        )
    return nodes


__all__ = [
    "HTTP_TYPE",
    "MCP_TYPE",
    "TOOL_SET_TYPES",
    "StdioPolicy",
    "ToolSetConfig",
    "ToolSetRuntime",
    "child_tool_nodes",
    "masked_headers",
    "scrub_tool_set_nodes",
]
