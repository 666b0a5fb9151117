"""The embeddable chat: a share link's page with its own frame headers, and the widget script.

- ``GET /chat/share?shareId=…`` answers the console's page (which shows the share chat) with
  ``Content-Security-Policy: frame-ancestors 'self' <the link's allowedOrigins>``; a link with no
  allowed origin, or an unknown shareId, may be framed by Fathom's own pages only (``'self'`` and
  ``X-Frame-Options: SAMEORIGIN``). ``embed=1`` in the address makes the page compact.
- ``GET /js/widget.js`` is the script a site includes (``<script src=…/js/widget.js
  data-share-id=…>``): a floating chat bubble that opens the link's page in a frame.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, Response

from fathom.server.routes.app_access import chat_of
from fathom.server.routes.console import serve_console

WIDGET = Path(__file__).resolve().parent.parent / "widget.js"

router = APIRouter(include_in_schema=False)


@router.get("/chat/share")
@router.get("/chat/share/")
async def share_page(request: Request) -> Response:
    """The share chat page, framable by the link's allowed origins."""
    share_id = request.query_params.get("shareId", "")
    link = await chat_of(request).share_links.find(share_id) if share_id else None
    origins = link.allowed_origins if link is not None else ()
    return serve_console(request, "chat/share", frame_origins=origins)


@router.get("/js/widget.js")
async def widget_script() -> Response:
    """The chat bubble script (see docs/console.md for its data- attributes)."""
    headers = {"Cache-Control": "no-cache", "Access-Control-Allow-Origin": "*"}
    return FileResponse(WIDGET, media_type="text/javascript; charset=utf-8", headers=headers)
