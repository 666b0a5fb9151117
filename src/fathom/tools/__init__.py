"""fathom.tools: JSON Schema ⇄ NodeIO, validation, the tool contract, ``run_tool``, the catalog and
tool sources (OpenAPI/HTTP, MCP, app-as-tool).

The schema side (validation, NodeIO projection, the tool-input runtime compiler) lives in
:mod:`fathom.tools.schema` and is re-exported here unchanged.
"""

from fathom.tools import schema as _schema
from fathom.tools.cancel import CancelSignal, SignalLike
from fathom.tools.catalog import BoundToolCatalog, ToolCatalog, ToolInvocation, define_tool_catalog
from fathom.tools.contract import (
    ParseResult,
    ToolCall,
    ToolCallFunction,
    ToolContext,
    ToolDefinition,
    ToolResult,
    ToolSource,
    as_tool_definition,
    parse_json_args,
    to_tool_result,
)
from fathom.tools.errors import (
    ToolCancelledError,
    ToolError,
    ToolInputError,
    ToolNotFoundError,
    ToolOutputError,
    error_text,
)
from fathom.tools.function_tool import FunctionTool, function_tool
from fathom.tools.http_client import ToolHttpClient, create_tool_http_client
from fathom.tools.run_tool import execute_tool, run_tool
from fathom.tools.schema import *  # noqa: F403
from fathom.tools.sources import (
    McpServer,
    McpToolSet,
    OpenApiSchemaError,
    OpenApiToolSet,
    parse_openapi_document,
)

__all__ = [
    "BoundToolCatalog",
    "CancelSignal",
    "FunctionTool",
    "McpServer",
    "McpToolSet",
    "OpenApiSchemaError",
    "OpenApiToolSet",
    "ParseResult",
    "SignalLike",
    "ToolCall",
    "ToolCallFunction",
    "ToolCancelledError",
    "ToolCatalog",
    "ToolContext",
    "ToolDefinition",
    "ToolError",
    "ToolHttpClient",
    "ToolInputError",
    "ToolInvocation",
    "ToolNotFoundError",
    "ToolOutputError",
    "ToolResult",
    "ToolSource",
    "as_tool_definition",
    "create_tool_http_client",
    "define_tool_catalog",
    "error_text",
    "execute_tool",
    "function_tool",
    "parse_json_args",
    "parse_openapi_document",
    "run_tool",
    "to_tool_result",
]

__all__ += [  # everything fathom.tools.schema exports (validation, NodeIO, runtime compiler)
    name
    for name in getattr(_schema, "__all__", [n for n in vars(_schema) if not n.startswith("_")])
    if name not in __all__ and not name.startswith("_")
]
