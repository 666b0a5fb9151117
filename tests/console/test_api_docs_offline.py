"""The API reference works with no network (issue 31): ``/docs`` (Swagger UI) and ``/redoc`` (ReDoc) load
only files the server itself serves, so a machine without internet still shows every operation.

The browser test blocks every request that is not to the loopback server and asserts none was even
attempted, then that both pages render the operations of ``/openapi.json``."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from fathom.server.routes.api_docs import ASSETS_DIR

PAGES = {"/docs": "swagger-ui-bundle.js", "/redoc": "redoc.standalone.js"}


@pytest.mark.parametrize("path", sorted(PAGES))
def test_the_reference_pages_name_only_local_files(module_live_server: Any, path: str) -> None:
    with module_live_server.client() as client:
        html = client.get(path).text
        assert f"/docs/assets/{PAGES[path]}" in html
        assert "https://" not in html and "http://" not in html, html  # no CDN, no Google fonts
        script = client.get(f"/docs/assets/{PAGES[path]}", headers={"Accept-Encoding": "gzip"})
        assert script.status_code == 200
        assert "javascript" in script.headers["content-type"]
        assert script.headers["content-encoding"] == "gzip"
        assert client.get("/docs/assets/../index.html").status_code == 404


def test_the_bundled_assets_carry_their_licences() -> None:
    notice = (ASSETS_DIR / "NOTICE").read_text()
    assert "swagger-ui-dist 5.35.0 (Apache-2.0)" in notice
    assert "redoc 2.5.4 (MIT)" in notice
    for licence in ("swagger-ui-dist.LICENSE", "swagger-ui-dist.NOTICE", "redoc.LICENSE"):
        assert (ASSETS_DIR / licence).stat().st_size > 0


VIEWS = {  # a desktop English browser and a Chinese phone: the reference is the same for both
    "desktop-en": ({"width": 1366, "height": 900}, "en-US", ""),
    "phone-zh": ({"width": 390, "height": 844}, "zh-CN", "-phone-zh"),
}


@pytest.mark.parametrize("view", sorted(VIEWS))
def test_swagger_ui_and_redoc_render_the_operations_with_the_network_blocked(
    module_live_server: Any, browser: Any, screenshots: Path, view: str
) -> None:
    live_server = module_live_server  # the pages only read: one server (one OpenAPI document built) for both
    viewport, locale, suffix = VIEWS[view]
    phone = viewport["width"] < 500
    context = browser.new_context(viewport=viewport, locale=locale, is_mobile=phone, has_touch=phone)
    outside: list[str] = []

    def only_loopback(route: Any) -> None:
        if _local(route.request.url):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort("internetdisconnected")

    context.route("**/*", only_loopback)
    context.on("request", lambda r: None if _local(r.url) else outside.append(r.url))
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(live_server.base_url + "/docs")
        # one block per operation; the chat completions route is among them
        page.wait_for_selector(".opblock-summary-path[data-path='/api/v1/chat/completions']", timeout=90_000)
        assert page.locator(".opblock").count() >= 10  # Swagger UI draws the rest as the page scrolls
        assert page.locator(".swagger-ui .info .title").inner_text().startswith("Fathom")
        page.click(".opblock-post .opblock-summary-path[data-path='/api/v1/chat/completions']")
        page.wait_for_selector(".opblock.is-open .opblock-section-request-body")  # the body model, offline
        page.screenshot(path=str(screenshots / f"40-api-docs-swagger{suffix}.png"))

        page.goto(live_server.base_url + "/redoc")
        page.wait_for_selector("[data-section-id^='operation/']", timeout=90_000)
        assert page.locator("[data-section-id^='operation/']").count() >= 10
        assert page.locator("h1").first.inner_text().startswith("Fathom")
        page.screenshot(path=str(screenshots / f"41-api-docs-redoc{suffix}.png"))
    finally:
        context.close()
    assert not outside, f"the reference pages reached outside the machine: {sorted(set(outside))}"
    assert not errors, errors


def _local(url: str) -> bool:
    return urlsplit(url).hostname == "127.0.0.1" or url.startswith(("data:", "blob:"))
