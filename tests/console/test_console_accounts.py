"""Browser test of accounts (issue 19 item 1), at 1440×900 and 390×844, each in an en-US and a zh-CN
browser: the root user signs in with the password printed on first start, makes an invitation link on
the Members page and signs out from the menu; a new person opens the link, chooses a username and
password, joins, chats with an app (answered by the scripted model), stays signed in across a reload,
signs out and signs in again with the password."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from console_support import data

from fathom.platform import Platform
from fathom.testing.scripted_turns import text_turn
from run_apart import run_apart

VIEWPORTS = {"desktop": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}
MODEL = "scripted-chat"
WORDS = {  # what the test clicks and reads, in each language of the console
    "en": {"sign_in": "Sign in", "members": "Members", "invite": "Create invitation link"}
    | {"sign_out": "Sign out", "join": "Join", "as_member": "as member"},
    "zh": {"sign_in": "登录", "members": "成员", "invite": "生成邀请链接"}
    | {"sign_out": "退出登录", "join": "加入", "as_member": "以 member 身份"},
}
LOCALES = {"en": "en-US", "zh": "zh-CN"}


def open_menu(page: Any, size: str) -> None:
    if size == "phone":
        page.click("button[aria-label=Menu]")


def sign_in_with_password(page: Any, username: str, password: str, button: str = "Sign in") -> None:
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click(f"button:has-text('{button}')")
    page.wait_for_selector("nav.sidebar")


def grant_read(server: Any, member_id: str, app_id: str) -> None:
    """Members and grants have no route: the owner's grant goes through the repository."""
    platform = Platform.build(server.platform.settings)

    async def go() -> None:
        try:
            await platform.teams.set_permission(member_id, "app", app_id, "read")
        finally:
            await platform.db.close()

    # Playwright's sync API keeps an event loop running in this thread: run it in another
    run_apart(go())


@pytest.mark.parametrize("lang", sorted(WORDS))
@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_an_invited_member_signs_in_with_a_password_and_chats(
    chat_live_server: Any, browser: Any, scripted_model: Any, screenshots: Path, size: str, lang: str
) -> None:
    server = chat_live_server
    words = WORDS[lang]
    root_password = server.boot.root_password
    assert root_password
    with server.client(server.admin_key) as client:
        body = {
            "name": "Helpdesk",
            "type": "simple",
            "simpleConfig": {"model": MODEL, "systemPrompt": "Brief."},
        }
        app_id = data(client.post("/api/core/app/create", json=body))
    scripted_model.set_script(lambda request: text_turn("Printers are on the second floor."))

    owner = browser.new_context(viewport=VIEWPORTS[size], locale=LOCALES[lang])
    page = owner.new_page()
    try:
        page.goto(server.base_url + "/")
        sign_in_with_password(page, "root", root_password, words["sign_in"])
        open_menu(page, size)
        page.click(f"nav >> text={words['members']}")
        page.select_option("select[name=inviteRole]", "member")
        page.click(f"button:has-text('{words['invite']}')")
        link = page.locator("[data-testid=invite-link] code").inner_text().strip()
        assert link.startswith(server.base_url + "/invite/")
        open_menu(page, size)
        page.click(f"nav button:has-text('{words['sign_out']}')")
        page.wait_for_selector("input[name=username]")
    finally:
        owner.close()

    context = browser.new_context(viewport=VIEWPORTS[size], locale=LOCALES[lang])
    page = context.new_page()
    try:
        page.goto(link)
        page.wait_for_selector(f"[data-testid=invite]:has-text('{words['as_member']}')")
        page.fill("input[name=username]", "mia")
        page.fill("input[name=password]", "mia's own password")
        page.click(f"button:has-text('{words['join']}')")
        page.wait_for_selector("nav.sidebar")
        cookie = next(c for c in context.cookies() if c["name"] == "fathom_session")
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"

        with server.client(server.admin_key) as client:
            members = data(client.get("/api/support/user/team/member/list"))
        mia = next(m for m in members if m["username"] == "mia")
        assert mia["role"] == "member"
        grant_read(server, mia["tmbId"], app_id)

        page.goto(f"{server.base_url}/chat/{app_id}")
        page.fill("textarea[name=message]", "Where are the printers?")
        page.keyboard.press("Enter")
        answer = page.wait_for_selector(".msg.ai[data-done='1']", timeout=30_000)
        assert "second floor" in answer.inner_text()
        page.screenshot(path=str(screenshots / f"accounts-{size}-{lang}-chat.png"))

        page.reload()  # the session cookie keeps her signed in
        page.wait_for_selector("nav.sidebar")
        open_menu(page, size)
        assert "mia" in page.locator("[data-testid=who-name]").inner_text()
        page.click(f"nav button:has-text('{words['sign_out']}')")
        page.wait_for_selector("input[name=username]")
        assert not [c for c in context.cookies() if c["name"] == "fathom_session"]
        sign_in_with_password(page, "mia", "mia's own password", words["sign_in"])
        page.goto(f"{server.base_url}/chat/{app_id}")
        page.wait_for_selector("textarea[name=message]")
    finally:
        context.close()
