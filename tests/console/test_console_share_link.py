"""Browser checks of share links: the owner makes one on the app's page and sees its address; a visitor
opens it on a phone (390×844) with no account, chats (the answer streams in), keeps their visitor id in
localStorage, and hits the link's requests-per-minute limit, which the page shows; on a desktop another
visitor chats within their own limit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from console_support import data, sign_in

from fathom.testing.scripted_turns import text_turn

ANSWER = "Refunds reach your card within five working days."


def test_a_visitor_chats_through_a_share_link_on_a_phone_until_its_qpm_limit(
    chat_live_server: Any, browser: Any, scripted_model: Any, screenshots: Path
) -> None:
    scripted_model.set_script(lambda request: text_turn(ANSWER))
    server = chat_live_server
    with server.client(server.admin_key) as client:
        body = {"name": "Help desk", "type": "simple", "simpleConfig": {"model": "scripted-chat"}}
        app_id = data(client.post("/api/core/app/create", json=body))

    owner = browser.new_page(viewport={"width": 1360, "height": 900})
    try:
        sign_in(owner, server.base_url, server.admin_key)
        owner.goto(f"{server.base_url}/apps/{app_id}")
        links = owner.wait_for_selector("[data-testid=share-links]")
        owner.fill("input[name=shareName]", "Website")
        owner.fill("input[name=shareQpm]", "1")
        owner.click("[data-testid=share-links] button:has-text('Create link')")
        url = owner.wait_for_selector("[data-testid=share-link-url]").input_value()
        assert url.startswith(f"{server.base_url}/chat/share?shareId=")
        assert "1 requests/min per visitor" in links.inner_text()
        owner.screenshot(path=str(screenshots / "30-share-links.png"), full_page=True)
    finally:
        owner.close()

    phone = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    visitor = phone.new_page()
    try:
        visitor.goto(url)
        assert visitor.wait_for_selector("[data-testid=share-app-name]:has-text('Help desk')")
        assert visitor.locator("nav.sidebar").count() == 0  # no console, no sign-in
        visitor.fill("textarea[name=message]", "How long do refunds take?")
        visitor.click("button:has-text('Send')")
        visitor.wait_for_selector(f"[data-testid=share-answer]:has-text('{ANSWER}')")
        uid = visitor.evaluate("Object.entries(localStorage).find(([k]) => k.endsWith('.outLinkUid'))?.[1]")
        assert uid and uid.startswith("visitor-")
        composer = visitor.locator(".composer").bounding_box()
        assert composer is not None and composer["y"] + composer["height"] <= 844  # on screen
        assert visitor.evaluate("document.documentElement.scrollWidth") <= 390  # no sideways scroll

        visitor.fill("textarea[name=message]", "And exchanges?")
        visitor.click("button:has-text('Send')")
        error = visitor.wait_for_selector("[data-testid=share-error]")
        assert "1 requests a minute" in error.inner_text()
        visitor.screenshot(path=str(screenshots / "31-share-page-phone.png"))

        # the visitor's history survives a reload (same browser, same visitor id)
        visitor.reload()
        visitor.wait_for_selector(f"[data-testid=share-answer]:has-text('{ANSWER}')")
    finally:
        phone.close()

    # on a desktop, another browser is another visitor: their own minute, their own (empty) history
    desktop = browser.new_page(viewport={"width": 1360, "height": 900})
    try:
        desktop.goto(url)
        desktop.wait_for_selector("[data-testid=share-app-name]:has-text('Help desk')")
        assert desktop.locator("[data-testid=share-answer]").count() == 0
        desktop.fill("textarea[name=message]", "How long do refunds take?")
        desktop.keyboard.press("Enter")
        desktop.wait_for_selector(f"[data-testid=share-answer]:has-text('{ANSWER}')")
        desktop.screenshot(path=str(screenshots / "32-share-page-desktop.png"))
    finally:
        desktop.close()


def test_a_question_sent_before_the_visitors_history_arrives_keeps_its_answer(
    chat_live_server: Any, browser: Any, scripted_model: Any
) -> None:
    """On a loaded server the page's history answer can come after the visitor pressed Send; it must
    not replace the question and the answer (it did: the chat then never showed one)."""
    scripted_model.set_script(lambda request: text_turn(ANSWER))
    server = chat_live_server
    with server.client(server.admin_key) as client:
        body = {"name": "Help desk", "type": "simple", "simpleConfig": {"model": "scripted-chat"}}
        app_id = data(client.post("/api/core/app/create", json=body))
        data(client.post("/api/core/app/version/publish", json={"appId": app_id}))
        link = {"appId": app_id, "type": "share", "name": "Website", "limit": {"QPM": 0}}
        share_id = data(client.post("/api/support/outLink/create", json=link))

    page = browser.new_page(viewport={"width": 390, "height": 844})
    held: list[Any] = []
    page.route("**/api/core/chat/getPaginationRecords", lambda route: held.append(route))  # answers late
    try:
        page.goto(f"{server.base_url}/chat/share?shareId={share_id}")
        page.wait_for_selector("[data-testid=share-app-name]:has-text('Help desk')")
        while not held:
            page.wait_for_timeout(20)
        records = held[0].fetch()  # the server's answer now (no chat yet), handed to the page later
        page.fill("textarea[name=message]", "How long do refunds take?")
        page.click("button:has-text('Send')")
        with page.expect_response("**/api/core/chat/getPaginationRecords"):
            held.pop().fulfill(response=records)
        page.wait_for_selector(f"[data-testid=share-answer]:has-text('{ANSWER}')")
        page.wait_for_timeout(300)  # let anything still in flight land on the page
        assert page.locator("[data-testid=share-question]").all_inner_texts() == ["How long do refunds take?"]
        assert page.locator("[data-testid=share-answer]").all_inner_texts() == [ANSWER]
    finally:
        page.close()
