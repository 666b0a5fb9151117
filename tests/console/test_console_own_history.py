"""Issue 31 item 5 in the console: a member's Chat → History lists their own chats only; the chats of an
app key and of a share-link visitor with the same app are in the app's Logs instead. Run at desktop size
in English and at phone size in Chinese (the History list is a drawer there)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from console_support import data

from fathom.testing import text_turn

MODEL = "scripted-chat"
CASES = {
    "desktop-en": ({"width": 1440, "height": 900}, "en-US", {"sign_in": "Sign in", "logs": "Logs"}),
    "phone-zh": ({"width": 390, "height": 844}, "zh-CN", {"sign_in": "登录", "logs": "日志"}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_members_history_holds_their_own_chats_and_the_logs_hold_the_rest(
    chat_live_server: Any, browser: Any, scripted_model: Any, screenshots: Path, case: str
) -> None:
    server = chat_live_server
    viewport, locale, words = CASES[case]
    scripted_model.set_script(lambda request: text_turn("Refunds take five days."))
    with server.client(server.admin_key) as owner_api:
        body = {"name": "Helpdesk", "type": "simple", "simpleConfig": {"model": MODEL}}
        app_id = data(owner_api.post("/api/core/app/create", json=body))
        app_key = data(owner_api.post("/api/support/openapi/create", json={"name": "bot", "appId": app_id}))
        share_id = data(owner_api.post("/api/support/outLink/create", json={"appId": app_id, "name": "Site"}))
    ask = {"messages": [{"role": "user", "content": "Asked by the key"}], "chatId": "key-chat"}
    with server.client(app_key) as key_api:
        key_api.post("/api/v1/chat/completions", json={"appId": app_id, **ask}).raise_for_status()
    with server.client() as visitor:
        visit = {"shareId": share_id, "outLinkUid": "visitor-1", "chatId": "visitor-chat"}
        question = [{"role": "user", "content": "Asked by a visitor"}]
        visitor.post("/api/v1/chat/completions", json={**visit, "messages": question}).raise_for_status()

    phone = viewport["width"] < 500
    context = browser.new_context(viewport=viewport, locale=locale, is_mobile=phone, has_touch=phone)
    page = context.new_page()
    try:
        page.goto(f"{server.base_url}/chat/{app_id}")
        page.fill("input[name=username]", "root")
        page.fill("input[name=password]", server.boot.root_password)
        page.click(f"button:has-text('{words['sign_in']}')")
        page.wait_for_selector("textarea[name=message]")
        page.fill("textarea[name=message]", "Asked in the console")
        page.keyboard.press("Enter")
        page.wait_for_selector(".msg.ai[data-done='1']", timeout=30_000)
        page.reload()  # the list is read again from the server
        if phone:
            page.click("button.history-toggle")
        page.wait_for_selector(".hist .hist-item", state="visible")
        items = page.locator(".hist .hist-item")
        assert items.count() == 1, items.all_inner_texts()
        assert "Asked in the console" in items.first.inner_text()
        history = page.locator(".hist").inner_text()
        assert "Asked by the key" not in history and "Asked by a visitor" not in history
        page.screenshot(path=str(screenshots / f"own-history-{case}.png"))

        page.goto(f"{server.base_url}/apps/{app_id}")
        page.click(f"a:has-text('{words['logs']}')")
        page.wait_for_selector("[data-testid=logs-table] tr.log-row[data-chat='visitor-chat']")
        rows = page.locator("[data-testid=logs-table] tr.log-row")
        chats = sorted(rows.nth(i).get_attribute("data-chat") or "" for i in range(rows.count()))
        assert len(chats) == 3 and {"key-chat", "visitor-chat"} < set(chats), chats
        page.screenshot(path=str(screenshots / f"own-history-{case}-logs.png"))
    finally:
        context.close()
