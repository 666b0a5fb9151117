"""Tool sources: HTTP tools from OpenAPI documents and MCP servers (apps are tools through ``appModule``
nodes, see ``fathom.workflow.nodes.graph_tools``)."""

from fathom.tools.sources.http_request import (
    HttpRequestSpec,
    OpenApiRequestError,
    build_openapi_request,
    operation_request_schema,
)
from fathom.tools.sources.http_tools import (
    HttpTool,
    HttpToolError,
    OpenApiToolSet,
    SecretHeaderSource,
    model_tool_name,
)
from fathom.tools.sources.mcp import McpServer, McpToolError, McpToolInfo, McpToolSet
from fathom.tools.sources.openapi import (
    OpenApiOperation,
    OpenApiSchema,
    OpenApiSchemaError,
    parse_openapi_document,
)

__all__ = [
    "McpServer",
    "McpToolError",
    "McpToolInfo",
    "McpToolSet",
    "HttpRequestSpec",
    "HttpTool",
    "HttpToolError",
    "OpenApiOperation",
    "OpenApiRequestError",
    "OpenApiSchema",
    "OpenApiSchemaError",
    "OpenApiToolSet",
    "SecretHeaderSource",
    "build_openapi_request",
    "model_tool_name",
    "operation_request_schema",
    "parse_openapi_document",
]
