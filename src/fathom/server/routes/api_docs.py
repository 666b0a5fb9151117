"""The API reference pages, ``/docs`` (Swagger UI) and ``/redoc`` (ReDoc), served with no network.

FastAPI's own pages load Swagger UI and ReDoc from a CDN (and ReDoc its fonts from Google), so on a machine
without internet they stay blank. Here both pages name only files under ``/docs/assets/``: the builds of
the npm packages ``swagger-ui-dist`` (Apache-2.0) and ``redoc`` (MIT), pinned in ``web/package.json`` and
copied with their licences and a NOTICE into ``static/api-docs/`` by the web build
(``web/scripts/api-docs.mjs``).
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, Response

from fathom.server.routes.console import STATIC_DIR, asset_response, static_file

ASSETS_DIR = STATIC_DIR / "api-docs"
ASSETS_URL = "/docs/assets"
OPENAPI_URL = "/openapi.json"
TITLE = "Fathom API"

router = APIRouter(include_in_schema=False)


@router.get("/docs")
async def swagger_ui() -> HTMLResponse:
    """Swagger UI over ``/openapi.json``: try any route with a key (Authorize)."""
    return get_swagger_ui_html(
        openapi_url=OPENAPI_URL,
        title=f"{TITLE} - Swagger UI",
        swagger_js_url=f"{ASSETS_URL}/swagger-ui-bundle.js",
        swagger_css_url=f"{ASSETS_URL}/swagger-ui.css",
        swagger_favicon_url=f"{ASSETS_URL}/favicon-32x32.png",
        # no badge asking validator.swagger.io about the document
        swagger_ui_parameters={"validatorUrl": None, "persistAuthorization": True},
    )


@router.get("/redoc")
async def redoc() -> HTMLResponse:
    """ReDoc over ``/openapi.json``, without Google's fonts."""
    return get_redoc_html(
        openapi_url=OPENAPI_URL,
        title=f"{TITLE} - ReDoc",
        redoc_js_url=f"{ASSETS_URL}/redoc.standalone.js",
        redoc_favicon_url=f"{ASSETS_URL}/favicon-32x32.png",
        with_google_fonts=False,
    )


@router.get(ASSETS_URL + "/{name}")
async def docs_asset(request: Request, name: str) -> Response:
    """One file of the two pages (scripts, stylesheet, icon, licences)."""
    file = static_file(ASSETS_DIR, name)
    if file is None:
        return Response("asset not found", status_code=404, media_type="text/plain")
    return asset_response(request, file)
