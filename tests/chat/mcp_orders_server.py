"""An MCP server built with the ``mcp`` package's own high-level server (``MCPServer``, FastMCP's name in
mcp 2.x) for the team tool-set API tests.

``python mcp_orders_server.py stdio`` serves over stdio; ``python mcp_orders_server.py http TOKEN`` serves
streamable HTTP on 127.0.0.1 (a free port, printed as ``PORT <n>``) and answers 401 to any request whose
``Authorization`` header is not ``Bearer TOKEN``, so a call that succeeds proves the stored secret was sent.
"""

from __future__ import annotations

import socket
import sys
from typing import Any

from mcp.server.mcpserver import MCPServer

server = MCPServer("fathom-orders")


@server.tool()
def lookup_order(order_id: str) -> str:
    """Look an order up by its id."""
    return f"order {order_id}: shipped on 2024-05-01"


def _guarded(app: Any, token: str) -> Any:
    expected = f"Bearer {token}".encode()

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") != expected:
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b"unauthorized"})
            return
        await app(scope, receive, send)

    return guarded


def run_http(token: str) -> None:
    import anyio
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    app = _guarded(server.streamable_http_app(host="127.0.0.1"), token)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    anyio.run(uvicorn.Server(config).serve, [sock])


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        run_http(sys.argv[2])
    else:
        server.run("stdio")
