"""Browser test of chat logs (issue 19 item 4), at 1440×900 and 390×844: a signed-in member chats with an
app in the console and gives the answer a thumbs-down with a comment; the owner opens the app's Logs,
filters by bad feedback, sees the conversation (a console chat) with the member's comment, adds a
corrected answer, and exports the logs as CSV. A share link's visitor, with no account, rates an answer
on the share page the same way, and the owner finds that conversation (a share-link chat) in the Logs."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest
from console_support import data, sign_in

from fathom.testing.scripted_turns import text_turn

VIEWPORTS = {"desktop": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}
MODEL = "scripted-chat"
COMMENT = "The printers moved to the third floor"


def sign_in_with_password(page: Any, username: str, password: str) -> None:
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button:has-text('Sign in')")
    page.wait_for_selector("nav.sidebar")


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_a_visitors_thumbs_down_reaches_the_owners_logs(
    chat_live_server: Any, browser: Any, scripted_model: Any, screenshots: Path, size: str
) -> None:
    server = chat_live_server
    assert server.boot.root_password
    with server.client(server.admin_key) as owner_api:
        body = {"name": "Helpdesk", "type": "simple", "simpleConfig": {"model": MODEL}}
        app_id = data(owner_api.post("/api/core/app/create", json=body))
        # another conversation, through the API and without feedback: the bad-feedback filter hides it
        ask = {"appId": app_id, "chatId": "api-chat", "messages": [{"role": "user", "content": "Hi"}]}
        owner_api.post("/api/v1/chat/completions", json=ask).raise_for_status()
        link = data(owner_api.post("/api/support/user/team/invitation/create", json={"role": "member"}))
        with server.client() as joining:
            joined = data(
                joining.post(
                    "/api/support/user/team/invitation/accept",
                    json={"token": link["token"], "username": "vic", "password": "vic's password"},
                )
            )
        grant = {"appId": app_id, "tmbIds": [joined["user"]["tmbId"]], "permission": "read"}
        data(owner_api.post("/api/core/app/collaborator/update", json=grant))
    scripted_model.set_script(lambda request: text_turn("Printers are on the second floor."))

    visitor = browser.new_context(viewport=VIEWPORTS[size])
    page = visitor.new_page()
    try:
        page.goto(f"{server.base_url}/chat/{app_id}")
        sign_in_with_password(page, "vic", "vic's password")
        page.wait_for_selector("textarea[name=message]")
        page.fill("textarea[name=message]", "Printer location?")
        page.keyboard.press("Enter")
        answer = page.wait_for_selector(".msg.ai[data-done='1']", timeout=30_000)
        assert "second floor" in answer.inner_text()
        page.click(".msg.ai [data-testid=feedback] button[aria-label='Bad answer']")
        page.fill("input[name=feedbackComment]", COMMENT)
        page.click("button:has-text('Send feedback')")
        page.wait_for_selector(f"[data-testid=feedback-comment]:has-text('{COMMENT}')")
        page.screenshot(path=str(screenshots / f"logs-{size}-thumbs-down.png"))
        page.reload()  # the feedback is stored with the answer
        page.wait_for_selector(f"[data-testid=feedback-comment]:has-text('{COMMENT}')")
    finally:
        visitor.close()

    owner = browser.new_context(viewport=VIEWPORTS[size], accept_downloads=True)
    page = owner.new_page()
    try:
        page.goto(f"{server.base_url}/apps/{app_id}")
        sign_in_with_password(page, "root", server.boot.root_password)
        page.click("a:has-text('Logs')")
        page.wait_for_selector("[data-testid=logs-table] tr.log-row[data-chat='api-chat']")
        assert page.locator("tr.log-row").count() == 2
        page.select_option("select[name=feedback]", "bad")
        page.wait_for_selector("[data-testid=logs-table] tr.log-row[data-chat='api-chat']", state="detached")
        rows = page.locator("tr.log-row")
        assert rows.count() == 1
        row_text = rows.first.inner_text()
        assert "Printer location?" in row_text and "Console" in row_text
        assert rows.first.locator("[data-testid=bad-count]").inner_text().strip() == "1"
        page.screenshot(path=str(screenshots / f"logs-{size}-filtered.png"))
        rows.first.click()
        dialog = page.wait_for_selector("[data-testid=log-conversation]")
        page.wait_for_selector(f"[data-testid=log-bad]:has-text('{COMMENT}')")
        assert "second floor" in dialog.inner_text()
        page.click("[data-testid=log-conversation] button:has-text('Correct this answer')")
        page.fill("textarea[name=correctionA]", "Printers are on the third floor.")
        page.click("button:has-text('Save correction')")
        page.wait_for_selector("[data-testid=log-correction]:has-text('third floor')")
        page.screenshot(path=str(screenshots / f"logs-{size}-conversation.png"))
        page.click("[data-testid=log-conversation] button:has-text('Close')")
        page.select_option("select[name=feedback]", "marked")
        page.wait_for_selector("tr.log-row:has-text('corrected 1')")
        with page.expect_download() as download_info:
            page.click("[data-testid=export-csv]")
        exported = Path(download_info.value.path()).read_text(encoding="utf-8-sig")
    finally:
        owner.close()
    rows_csv = list(csv.reader(io.StringIO(exported, newline="")))
    header, body_rows = rows_csv[0], rows_csv[1:]
    assert len(body_rows) == 1
    row = dict(zip(header, body_rows[0], strict=True))
    assert row["Source"] == "Console" and row["Bad feedback"] == "1" and row["Marked"] == "1"
    assert COMMENT in row["Feedback"] and "third floor" in row["Feedback"]


def test_a_share_link_visitors_thumbs_down_reaches_the_owners_logs(
    chat_live_server: Any, browser: Any, scripted_model: Any, screenshots: Path
) -> None:
    server = chat_live_server
    comment = "Refunds take ten days, not five"
    with server.client(server.admin_key) as owner_api:
        body = {"name": "Refund desk", "type": "simple", "simpleConfig": {"model": MODEL}}
        app_id = data(owner_api.post("/api/core/app/create", json=body))
        ask = {"appId": app_id, "chatId": "api-chat", "messages": [{"role": "user", "content": "Hi"}]}
        owner_api.post("/api/v1/chat/completions", json=ask).raise_for_status()
        link = {"appId": app_id, "type": "share", "name": "Website"}
        share_id = data(owner_api.post("/api/support/outLink/create", json=link))
    scripted_model.set_script(lambda request: text_turn("Refunds take five working days."))

    visitor = browser.new_context(viewport=VIEWPORTS["phone"], is_mobile=True, has_touch=True)
    page = visitor.new_page()
    try:
        page.goto(f"{server.base_url}/chat/share?shareId={share_id}")
        page.wait_for_selector("[data-testid=share-app-name]:has-text('Refund desk')")
        page.fill("textarea[name=message]", "Refund time?")
        page.click("button:has-text('Send')")
        answer = page.wait_for_selector("[data-testid=share-answer] [data-testid=feedback]", timeout=30_000)
        answer.query_selector("button[aria-label='Bad answer']").click()
        page.fill("input[name=feedbackComment]", comment)
        page.click("button:has-text('Send feedback')")
        page.wait_for_selector(f"[data-testid=feedback-comment]:has-text('{comment}')")
        page.screenshot(path=str(screenshots / "logs-share-thumbs-down.png"))
        page.reload()  # stored with the answer: the visitor sees it again
        page.wait_for_selector(f"[data-testid=feedback-comment]:has-text('{comment}')")
    finally:
        visitor.close()

    owner = browser.new_page(viewport=VIEWPORTS["desktop"])
    try:
        sign_in(owner, server.base_url, server.admin_key)
        owner.goto(f"{server.base_url}/apps/{app_id}")
        owner.click("a:has-text('Logs')")
        owner.wait_for_selector("[data-testid=logs-table] tr.log-row[data-chat='api-chat']")
        # every chat with its owner: the key that made the API chat, the visitor of the share-link chat
        api_owner = owner.locator("tr.log-row[data-chat='api-chat'] [data-testid=log-owner]").inner_text()
        assert api_owner.startswith("API key")
        owners = owner.locator("tr.log-row [data-testid=log-owner]").all_inner_texts()
        assert any(text.startswith("Visitor: ") for text in owners), owners
        owner.select_option("select[name=feedback]", "bad")
        owner.wait_for_selector("[data-testid=logs-table] tr.log-row[data-chat='api-chat']", state="detached")
        rows = owner.locator("tr.log-row")
        assert rows.count() == 1
        assert "Refund time?" in rows.first.inner_text()
        assert "Share link" in rows.first.inner_text()
        rows.first.click()
        owner.wait_for_selector(f"[data-testid=log-bad]:has-text('{comment}')")
        owner.screenshot(path=str(screenshots / "logs-share-feedback.png"))
    finally:
        owner.close()
