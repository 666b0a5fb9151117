"""The web console: the built single-page app under ``fathom/server/static`` served at ``/``.

- ``/assets/*`` are content-hashed build outputs: cached for a year, and sent pre-compressed (``.gz``
  beside each file) when the browser accepts gzip.
- Any other GET that is not an API or documentation path answers ``index.html`` so client-side routes
  (``/knowledge/…``, ``/chat/…``) survive a reload. The path pattern itself excludes ``/api``, ``/docs``,
  ``/redoc`` and ``/openapi.json``, so the console never shadows a route registered after it.
- Its pages may be framed only by Fathom's own pages (``frame-ancestors 'self'``), except a share
  link's page, which ``routes/embed.py`` answers with the link's own allowed origins.
- With ``FATHOM_PUBLIC_URL`` set, ``index.html`` carries it as ``<meta name="fathom-public-url">``: the
  share links and widget snippets the console shows use that address instead of the console's own.
"""

from __future__ import annotations

import mimetypes
from html import escape
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, Response
from starlette.convertors import Convertor, register_url_convertor

from fathom.chat.embedding_sites import frame_headers

STATIC_DIR = Path(__file__).resolve().parent.parent / "static"
_RESERVED = r"(?!api(?:/|$)|docs(?:/|$)|redoc(?:/|$)|openapi\.json$)"
_IMMUTABLE = "public, max-age=31536000, immutable"

NOT_BUILT = """<!doctype html><meta charset="utf-8"><title>Fathom</title>
<body style="font-family:sans-serif;max-width:40em;margin:4em auto">
<h1>Fathom</h1><p>The web console has not been built in this checkout
(<code>src/fathom/server/static/index.html</code> is missing). Run <code>cd web &amp;&amp; npm ci &amp;&amp;
npm run build</code>, or use the API: <a href="/docs">/docs</a>.</p></body>"""


class ConsolePathConvertor(Convertor[str]):
    """Any path except the API and documentation ones."""

    regex = _RESERVED + r".*"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("consolepath", ConsolePathConvertor())

router = APIRouter(include_in_schema=False)


def static_file(static_dir: Path, path: str) -> Path | None:
    """The file under ``static_dir`` that ``path`` names, or None (never a path outside it)."""
    if not path or path.endswith("/"):
        return None
    candidate = (static_dir / path).resolve()
    try:
        candidate.relative_to(static_dir.resolve())
    except ValueError:
        return None
    return candidate if candidate.is_file() else None


def asset_response(request: Request, file: Path) -> Response:
    media_type = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
    headers = {"Cache-Control": _IMMUTABLE if "/assets/" in file.as_posix() else "no-cache"}
    gz = file.with_name(file.name + ".gz")
    if "gzip" in request.headers.get("accept-encoding", "") and gz.is_file():
        headers |= {"Content-Encoding": "gzip", "Vary": "Accept-Encoding"}
        return FileResponse(gz, media_type=media_type, headers=headers)
    return FileResponse(file, media_type=media_type, headers=headers)


def _index_page(request: Request, index: Path, public_url: str | None) -> Response:
    if not public_url:
        return asset_response(request, index)
    meta = f'<meta name="fathom-public-url" content="{escape(public_url.rstrip("/"), quote=True)}" />'
    text = index.read_text(encoding="utf-8").replace("</head>", f"{meta}</head>", 1)
    return HTMLResponse(text, headers={"Cache-Control": "no-cache"})


def serve_console(
    request: Request,
    path: str,
    static_dir: Path = STATIC_DIR,
    frame_origins: tuple[str, ...] = (),
    public_url: str | None = None,
) -> Response:
    """A static file when ``path`` names one, else the app's ``index.html`` (client routes), which only
    ``frame_origins`` and Fathom itself may show in a frame; ``public_url``: the address it announces."""
    file = static_file(static_dir, path)
    if file is not None:
        return asset_response(request, file)
    if path.startswith("assets/"):
        return Response("asset not found", status_code=404, media_type="text/plain")
    index = static_dir / "index.html"
    page = _index_page(request, index, public_url) if index.is_file() else HTMLResponse(NOT_BUILT)
    page.headers.update(frame_headers(frame_origins))
    return page


@router.get("/{path:consolepath}")
async def console(request: Request, path: str) -> Response:
    """The console's files and client routes."""
    platform = getattr(request.app.state, "platform", None)
    public_url = platform.settings.public_url if platform is not None else None
    return serve_console(request, path, public_url=public_url)
