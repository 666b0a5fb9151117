"""Team tool sets over FastGPT's paths: ``/api/core/app/mcpTools/{create,update,getTools,runTool,
getChildren}`` and ``/api/core/app/httpTools/{create,update,runTool,getChildren}``. A tool set is an app
(type ``toolSet`` / ``httpToolSet``), so the app routes list, show (secrets masked), share and delete it."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, Field, StringConstraints

from fathom.chat.team_tools import HTTP_TYPE, MCP_TYPE, child_tool_nodes
from fathom.chat.tool_set_service import HttpToolSetSpec, McpServerSpec, ToolSetProfile
from fathom.server.auth import AuthContext, authenticate
from fathom.server.errors import envelope
from fathom.server.permissions import require_team_key
from fathom.server.routes.app_access import chat_of, load_app
from fathom.server.routes.app_models import AppName, AppRef, Avatar
from fathom.server.routes.common import ANY_METHOD
from fathom.server.typed import ApiModel, ObjectId, OptionalObjectId, Text, answers, parsed

router = APIRouter(tags=["tools"])

Address = Annotated[str, StringConstraints(max_length=2000)]


class McpServer(ApiModel):
    """An MCP server: ``url`` (streamable HTTP) or ``command`` + ``args`` (stdio), one of the two."""

    url: Address | None = None
    command: Address | None = None
    args: list[str | int | float] | None = None
    headerSecret: dict[str, Any] | None = Field(
        None, description="{header name: {value} or a string}; values are stored encrypted"
    )


class McpToolSet(McpServer):
    toolList: list[dict[str, Any]] | None = Field(None, description="Empty: read from the server")


class CreateMcpTools(McpToolSet):
    name: AppName
    intro: Text | None = None
    avatar: Avatar | None = None


class UpdateMcpTools(McpToolSet):
    appId: ObjectId


class HttpToolSet(ApiModel):
    baseUrl: Address | None = None
    apiSchemaStr: str | None = Field(None, description="An OpenAPI document (JSON or YAML text)")
    customHeaders: str | None = Field(None, description="A JSON object of headers, as text")
    headerSecret: dict[str, Any] | None = None


class CreateHttpTools(HttpToolSet):
    name: AppName
    intro: Text | None = None
    avatar: Avatar | None = None


class UpdateHttpTools(HttpToolSet):
    appId: ObjectId


ToolName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]


class RunMcpTool(McpServer):
    appId: OptionalObjectId = Field(None, description="A stored set (else the server given here)")
    toolName: ToolName
    params: dict[str, Any] | None = None


class RunHttpTool(ApiModel):
    appId: ObjectId
    toolName: ToolName
    params: dict[str, Any] | None = None


class McpToolView(BaseModel):
    name: str
    description: str | None = None
    inputSchema: dict[str, Any] | None = None


class ToolSetChildren(BaseModel):
    toolSet: dict[str, Any] = Field(description="The set, secrets masked")
    children: list[dict[str, Any]] = Field(description="One workflow tool node per tool")


def _mcp_server(payload: McpServer) -> McpServerSpec:
    """The server the request names. ``getTools`` and ``runTool`` declare no ``toolList`` but read one
    sent beside the server all the same (a malformed one is refused), so it is taken from the extras."""
    tool_list = (
        payload.toolList if isinstance(payload, McpToolSet) else (payload.model_extra or {}).get("toolList")
    )
    return McpServerSpec(
        url=payload.url,
        command=payload.command,
        args=payload.args,
        header_secret=payload.headerSecret,
        tool_list=tool_list,
    )


def _http_tool_set(payload: HttpToolSet) -> HttpToolSetSpec:
    return HttpToolSetSpec(
        base_url=payload.baseUrl,
        api_schema_str=payload.apiSchemaStr,
        custom_headers=payload.customHeaders,
        header_secret=payload.headerSecret,
    )


async def _create(
    request: Request,
    auth: AuthContext,
    payload: CreateMcpTools | CreateHttpTools,
    spec: McpServerSpec | HttpToolSetSpec,
) -> dict[str, Any]:
    require_team_key(auth, "create tool sets")
    profile = ToolSetProfile(name=payload.name, intro=payload.intro, avatar=payload.avatar)
    app = await chat_of(request).create_tool_set(auth.team_id, auth.member_id, profile, spec)
    return envelope(app.id)


async def _update(
    request: Request,
    auth: AuthContext,
    payload: UpdateMcpTools | UpdateHttpTools,
    spec: McpServerSpec | HttpToolSetSpec,
) -> dict[str, Any]:
    app = await load_app(request, auth, payload.appId, "manage")
    await chat_of(request).tool_sets.update(auth.team_id, app.id, spec)  # a set of the spec's kind
    return envelope(None)


async def _children(request: Request, auth: AuthContext, kind: str, ref: AppRef) -> dict[str, Any]:
    app = await load_app(request, auth, ref.app_id, "read")
    service = chat_of(request).tool_sets
    app, config = await service.get(auth.team_id, app.id, kind)
    return envelope({"toolSet": service.view(app, config), "children": child_tool_nodes(app, config)})


async def _run_tool(request: Request, auth: AuthContext, payload: RunMcpTool | RunHttpTool) -> dict[str, Any]:
    if payload.appId:  # a call with the set's stored credentials: write permission on the set
        await load_app(request, auth, payload.appId, "write")
    else:
        require_team_key(auth, "try MCP servers")
    server = _mcp_server(payload) if isinstance(payload, RunMcpTool) else None
    answer = await chat_of(request).tool_sets.run_tool(
        auth.team_id, payload.toolName, payload.params, app_id=payload.appId, server=server
    )
    return envelope(answer)


@router.api_route(
    "/api/core/app/mcpTools/create",
    methods=ANY_METHOD,
    summary="Register an MCP tool set",
    responses=answers(str),
)
async def create_mcp_tools(
    request: Request,
    auth: AuthContext = Depends(authenticate),
    payload: CreateMcpTools = parsed(CreateMcpTools),
) -> dict[str, Any]:
    """``{name, intro?, avatar?, url | command+args, headerSecret?, toolList?}``; answers the set's id. An
    empty ``toolList`` is read from the server. ``headerSecret`` values are stored encrypted."""
    return await _create(request, auth, payload, _mcp_server(payload))


@router.api_route(
    "/api/core/app/mcpTools/update",
    methods=ANY_METHOD,
    summary="Change an MCP tool set",
    responses=answers(None),
)
async def update_mcp_tools(
    request: Request,
    auth: AuthContext = Depends(authenticate),
    payload: UpdateMcpTools = parsed(UpdateMcpTools),
) -> dict[str, Any]:
    """``{appId, url | command+args, headerSecret, toolList}``; a header sent back blank keeps its secret."""
    return await _update(request, auth, payload, _mcp_server(payload))


@router.api_route(
    "/api/core/app/mcpTools/getTools",
    methods=ANY_METHOD,
    summary="The tools an MCP server lists",
    responses=answers(list[McpToolView]),
)
async def get_mcp_tools(
    request: Request, auth: AuthContext = Depends(authenticate), payload: McpServer = parsed(McpServer)
) -> dict[str, Any]:
    """``{url | command+args, headerSecret?}`` → ``[{name, description, inputSchema}]``."""
    require_team_key(auth, "try MCP servers")
    return envelope(await chat_of(request).tool_sets.get_tools(_mcp_server(payload)))


@router.api_route(
    "/api/core/app/mcpTools/runTool",
    methods=ANY_METHOD,
    summary="Call one MCP tool",
    responses=answers(Any),
)
async def run_mcp_tool(
    request: Request, auth: AuthContext = Depends(authenticate), payload: RunMcpTool = parsed(RunMcpTool)
) -> dict[str, Any]:
    """``{appId | url, toolName, params, headerSecret?}`` → the tool's answer."""
    return await _run_tool(request, auth, payload)


@router.api_route(
    "/api/core/app/mcpTools/getChildren",
    methods=ANY_METHOD,
    summary="An MCP set's tools",
    responses=answers(ToolSetChildren),
)
async def mcp_children(
    request: Request, auth: AuthContext = Depends(authenticate), payload: AppRef = parsed(AppRef)
) -> dict[str, Any]:
    """``{id}`` → the set (secrets masked) and one workflow ``tool`` node per tool, with ``configStatus``."""
    return await _children(request, auth, MCP_TYPE, payload)


@router.api_route(
    "/api/core/app/httpTools/create",
    methods=ANY_METHOD,
    summary="Register an HTTP tool set",
    responses=answers(str),
)
async def create_http_tools(
    request: Request,
    auth: AuthContext = Depends(authenticate),
    payload: CreateHttpTools = parsed(CreateHttpTools),
) -> dict[str, Any]:
    """``{name, intro?, avatar?}`` (FastGPT), plus Fathom's optional ``baseUrl``, ``apiSchemaStr``,
    ``customHeaders``, ``headerSecret``; answers the set's id."""
    return await _create(request, auth, payload, _http_tool_set(payload))


@router.api_route(
    "/api/core/app/httpTools/update",
    methods=ANY_METHOD,
    summary="Change an HTTP tool set",
    responses=answers(None),
)
async def update_http_tools(
    request: Request,
    auth: AuthContext = Depends(authenticate),
    payload: UpdateHttpTools = parsed(UpdateHttpTools),
) -> dict[str, Any]:
    """``{appId, baseUrl, apiSchemaStr, customHeaders, headerSecret}``; the tool list is the document's
    operations."""
    return await _update(request, auth, payload, _http_tool_set(payload))


@router.api_route(
    "/api/core/app/httpTools/runTool",
    methods=ANY_METHOD,
    summary="Call one HTTP tool",
    responses=answers(Any),
)
async def run_http_tool(
    request: Request, auth: AuthContext = Depends(authenticate), payload: RunHttpTool = parsed(RunHttpTool)
) -> dict[str, Any]:
    """``{appId, toolName, params}`` → the tool's answer."""
    return await _run_tool(request, auth, payload)


@router.api_route(
    "/api/core/app/httpTools/getChildren",
    methods=ANY_METHOD,
    summary="An HTTP set's tools",
    responses=answers(ToolSetChildren),
)
async def http_children(
    request: Request, auth: AuthContext = Depends(authenticate), payload: AppRef = parsed(AppRef)
) -> dict[str, Any]:
    """``{id}`` → the set (secrets masked) and one workflow ``tool`` node per operation."""
    return await _children(request, auth, HTTP_TYPE, payload)
