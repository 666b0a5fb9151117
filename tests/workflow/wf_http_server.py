"""A real loopback HTTP server for workflow tests (stdlib, port 0, background thread).

Routes: ``/status/<code>`` answers that status with a JSON body; anything else echoes the request
as JSON ``{method, path, query, headers, body, json}``.
"""

from __future__ import annotations

import json
from contextlib import AbstractContextManager
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlparse

from loopback_servers import serve_on_loopback


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        return

    def _answer(self) -> None:
        url = urlparse(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode() if length else ""
        if url.path.startswith("/status/"):
            code = int(url.path.rsplit("/", 1)[1])
            payload: object = {"message": f"status {code}"}
        else:
            code = 200
            try:
                parsed = json.loads(body) if body else None
            except ValueError:
                parsed = None
            payload = {
                "method": self.command,
                "path": url.path,
                "query": {k: v[0] for k, v in parse_qs(url.query).items()},
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": body,
                "json": parsed,
            }
        data = json.dumps(payload).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _answer


def loopback_server() -> AbstractContextManager[str]:
    """Yield the base URL of a running server; shut it down afterwards."""
    return serve_on_loopback(_Handler)
