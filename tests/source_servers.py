"""The two kinds of source a knowledge base syncs from, as loopback servers the tests change between
syncs: a small static website (links, a redirect, robots.txt) and an API file library speaking FastGPT's
``apiDataset`` protocol (``/v1/file/list``, ``/v1/file/content``, ``/v1/file/read``)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlsplit

from loopback_servers import QuietHandler

TOKEN = "library-token"


def page(title: str, body: str, links: tuple[str, ...] = ()) -> bytes:
    """A page whose content sits in ``<div class="doc">``, with navigation noise around it."""
    anchors = "".join(f'<a href="{link}">{link}</a> ' for link in links)
    return (
        f"<html><head><title>{title}</title></head><body>"
        f"<nav>NAVIGATION MENU {anchors}</nav>"
        f'<div class="doc"><h1>{title}</h1><p>{body}</p></div>'
        "<footer>FOOTER NOISE</footer></body></html>"
    ).encode()


class Site(QuietHandler):
    """``pages``: path → HTML (or ``("redirect", target)``); anything else is a 404."""

    pages: ClassVar[dict[str, Any]] = {}
    robots: ClassVar[str] = ""
    hits: ClassVar[Counter[str]] = Counter()

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        path = urlsplit(self.path).path
        Site.hits[path] += 1
        if path == "/robots.txt":
            self.send_body(200, Site.robots.encode(), "text/plain")
            return
        found = Site.pages.get(path)
        if found is None:
            self.send_body(404, b"not here")
        elif isinstance(found, tuple):
            self.send_response(302)
            self.send_header("Location", found[1])
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self.send_body(200, found, "text/html; charset=utf-8")


class Library(QuietHandler):
    """``files``: id → {name, parentId, type, content? | previewUrl?}."""

    files: ClassVar[dict[str, dict[str, Any]]] = {}
    calls: ClassVar[list[str]] = []

    def _authorised(self) -> bool:
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            self.send_body(
                401, json.dumps({"success": False, "message": "bad token"}).encode(), "application/json"
            )
            return False
        return True

    def _answer(self, data: Any) -> None:
        body = json.dumps({"success": True, "message": "", "data": data}).encode()
        self.send_body(200, body, "application/json")

    def do_POST(self) -> None:  # noqa: N802
        Library.calls.append(self.path)
        if not self._authorised():
            return
        length = int(self.headers.get("Content-Length") or 0)
        request = json.loads(self.rfile.read(length) or b"{}")
        if urlsplit(self.path).path != "/v1/file/list":
            self.send_body(404, b"{}", "application/json")
            return
        parent = request.get("parentId")
        key = (request.get("searchKey") or "").lower()
        items = [
            {
                "id": file_id,
                "parentId": item.get("parentId"),
                "name": item["name"],
                "type": item.get("type", "file"),
                "updateTime": "2026-12-01T00:00:00Z",
                "createTime": "2026-11-01T00:00:00Z",
            }
            for file_id, item in Library.files.items()
            if (key and key in item["name"].lower()) or (not key and item.get("parentId") == parent)
        ]
        self._answer(items)

    def do_GET(self) -> None:  # noqa: N802
        Library.calls.append(self.path)
        if not self._authorised():
            return
        parts = urlsplit(self.path)
        file_id = (parse_qs(parts.query).get("id") or [""])[0]
        item = Library.files.get(file_id)
        if item is None:
            self.send_body(
                404, json.dumps({"success": False, "message": "no such file"}).encode(), "application/json"
            )
        elif parts.path == "/v1/file/content":
            if "previewUrl" in item:
                self._answer({"title": item["name"], "previewUrl": item["previewUrl"]})
            else:
                self._answer({"title": item["name"], "content": item["content"]})
        elif parts.path == "/v1/file/read":
            self._answer({"url": f"https://files.example/{file_id}"})
        else:
            self.send_body(404, b"{}", "application/json")
