"""Browser checks of the embeddable chat: the owner names a site allowed to embed a share link and sees
its script-tag and iframe snippets; a page of that site (another loopback origin) includes the script
tag, the bubble appears, opening it loads the link's chat in a frame and a visitor chats through it; on
a phone the panel takes the whole screen. A page of a site the link does not allow gets the bubble, but
Chromium refuses to show the chat in its frame (the share page's ``frame-ancestors``)."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Any

from console_support import data, sign_in

from fathom.testing.scripted_turns import text_turn
from loopback_servers import QuietHandler, serve_on_loopback

ANSWER = "Our shop ships within two days."


def site_with_widget(stack: ExitStack, script_tag: str) -> str:
    """A loopback site (its own origin) whose page includes ``script_tag``; its origin."""
    page = (
        '<!doctype html><html><head><meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Shop</title></head><body><h1>Shop</h1>{script_tag}</body></html>"
    )

    class Site(QuietHandler):
        def do_GET(self) -> None:
            self.send_body(200, page.encode(), "text/html; charset=utf-8")

    return stack.enter_context(serve_on_loopback(Site))


def share_frame(page: Any) -> Any:
    page.click("#fathom-chat-bubble")
    frame = page.wait_for_selector("#fathom-chat-frame").content_frame()
    frame.wait_for_load_state("load")
    return frame


def test_the_widget_chats_on_an_allowed_site_and_is_refused_on_another(
    chat_live_server: Any, browser: Any, scripted_model: Any, screenshots: Path
) -> None:
    scripted_model.set_script(lambda request: text_turn(ANSWER))
    server = chat_live_server
    with server.client(server.admin_key) as client:
        body = {"name": "Shop help", "type": "simple", "simpleConfig": {"model": "scripted-chat"}}
        app_id = data(client.post("/api/core/app/create", json=body))
        ok_link = {"appId": app_id, "type": "share", "name": "Widget"}
        data(client.post("/api/support/outLink/create", json=ok_link))

    with ExitStack() as stack:
        owner = browser.new_page(viewport={"width": 1360, "height": 900})
        try:
            sign_in(owner, server.base_url, server.admin_key)
            owner.goto(f"{server.base_url}/apps/{app_id}")
            owner.wait_for_selector("[data-testid=share-link]")
            script_tag = owner.locator("[data-testid=share-script-snippet]").input_value()
            iframe_tag = owner.locator("[data-testid=share-iframe-snippet]").input_value()
            assert script_tag.startswith(f'<script src="{server.base_url}/js/widget.js" data-share-id="')
            assert "&amp;embed=1" in iframe_tag or "&embed=1" in iframe_tag
            allowed = site_with_widget(stack, script_tag)
            refused = site_with_widget(stack, script_tag)

            owner.fill("textarea[name=allowedOrigins]", "not a site")
            owner.click("[data-testid=share-link] button:has-text('Save')")
            assert (
                "allowedOrigins[0]"
                in owner.wait_for_selector("[data-testid=share-origins-error]").inner_text()
            )
            owner.fill("textarea[name=allowedOrigins]", allowed)
            owner.click("[data-testid=share-link] button:has-text('Save')")
            owner.wait_for_selector("[data-testid=share-origins-error]", state="detached")
            owner.reload()
            assert owner.wait_for_selector("textarea[name=allowedOrigins]").input_value() == allowed
            owner.screenshot(path=str(screenshots / "33-share-link-snippets.png"), full_page=True)
        finally:
            owner.close()

        site = browser.new_page(viewport={"width": 1360, "height": 900})
        try:
            site.goto(allowed + "/")
            site.wait_for_selector("#fathom-chat-bubble")
            assert site.locator("#fathom-chat-frame").count() == 0  # nothing loads before a click
            frame = share_frame(site)
            panel = site.locator("#fathom-chat-panel").bounding_box()
            assert panel is not None and panel["width"] == 380
            frame.wait_for_selector("[data-testid=share-page].embed")
            frame.fill("textarea[name=message]", "When do you ship?")
            frame.click("button:has-text('Send')")
            frame.wait_for_selector(f"[data-testid=share-answer]:has-text('{ANSWER}')")
            site.screenshot(path=str(screenshots / "34-widget-desktop.png"))
            site.click("#fathom-chat-close")
            assert not site.locator("#fathom-chat-panel").is_visible()
        finally:
            site.close()

        phone = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
        try:
            mobile = phone.new_page()
            mobile.goto(allowed + "/")
            frame = share_frame(mobile)
            frame.wait_for_selector("[data-testid=share-page].embed")
            panel = mobile.locator("#fathom-chat-panel").bounding_box()
            assert panel == {"x": 0, "y": 0, "width": 390, "height": 844}
            assert not mobile.locator("#fathom-chat-bubble").is_visible()  # the panel's × closes it
            mobile.screenshot(path=str(screenshots / "35-widget-phone.png"))
        finally:
            phone.close()

        other = browser.new_page(viewport={"width": 1360, "height": 900})
        try:
            other.goto(refused + "/")
            frame = share_frame(other)
            assert frame.url.startswith("chrome-error://"), frame.url  # Chromium refused to show it
            assert frame.locator("[data-testid=share-page]").count() == 0
        finally:
            other.close()
