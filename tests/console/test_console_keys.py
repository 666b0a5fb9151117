"""Browser check of the Keys & usage page: a new key is shown once and works, revoking it needs a confirm,
and usage appears per app and per day."""

from __future__ import annotations

from typing import Any

import httpx
from console_support import sign_in

from fathom.platform import Platform
from fathom.store.protocols import UsageRecord
from run_apart import run_apart


def _record_usage(server: Any) -> str:
    """An app with two usage records, written from another thread (the browser owns this one's loop)."""

    async def main() -> str:
        platform = Platform.build(server.platform.settings)
        try:
            app = await platform.apps.create_app(server.boot.team_id, "Helpdesk")
            for tokens in (1200, 800):
                await platform.usage.record(
                    UsageRecord(
                        server.boot.team_id, app.id, "api", "AI chat", "m", tokens, 300, total_points=1
                    )
                )
            return app.id
        finally:
            await platform.db.close()

    return run_apart(main(), 30)


def test_keys_are_shown_once_revoked_after_confirm_and_usage_is_listed(
    live_server: Any, browser: Any
) -> None:
    _record_usage(live_server)
    page = browser.new_page(viewport={"width": 1360, "height": 900})
    page.on("dialog", lambda dialog: dialog.accept())
    try:
        sign_in(page, live_server.base_url, live_server.admin_key)
        page.click("nav >> text=Keys & usage")
        page.fill("input[name=keyName]", "website bot")
        page.click("button:has-text('Create key')")
        shown = page.wait_for_selector("[data-testid=new-key] code").inner_text()
        assert shown.startswith("fathom-")
        headers = {"Authorization": f"Bearer {shown}"}
        assert httpx.get(live_server.base_url + "/api/v1/whoami", headers=headers).status_code == 200
        row = page.locator("tr[data-key='website bot']")
        assert shown not in row.inner_text()
        page.wait_for_selector("td:has-text('Helpdesk')")
        assert "2,000" in page.locator(".card:has(h2:has-text('Usage'))").inner_text()

        row.locator("button:has-text('Revoke')").click()
        page.wait_for_selector("tr[data-key='website bot']", state="detached")
        assert httpx.get(live_server.base_url + "/api/v1/whoami", headers=headers).status_code == 401
    finally:
        page.close()
