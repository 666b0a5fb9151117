"""Issue 31 item 3: the workflow editor on a 390×844 touch phone. Chromium with touch emulation builds a
start → knowledge search → AI chat workflow by touch only — palette taps, tap-a-handle-then-another
connections, inputs set in the bottom sheet — publishes it, and the app answers from the scripted model
with the knowledge base's passage in its prompt; in an en-US and in a zh-CN browser.

At each step the layout is checked: the palette (a collapsible strip) and the inspector (a bottom sheet of
at most 60 % of the screen) never cover a node that should be visible, palette labels are not cut, and
every node handle is a touch target of at least 24 × 24 px on screen. The steps and their checks are
``console_support.build_by_touch``, which the README walkthrough's screenshots of the phone editor take
too (tests/repo/readme_screenshots.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from console_support import (
    PHONE,
    build_by_touch,
    data,
    quote_search_results_in_the_sheet,
    sign_in,
    touch_flow_app,
    wait_ready,
)

from fathom.testing import text_turn

MODEL = "scripted-chat"
PASSAGE = "Refunds are paid to the original card within five working days."


WORDS = {  # what the test taps and reads, in each language of the console
    "en-US": {"sign_in": "Sign in", "publish": "Publish", "published": "Published", "send": "Send"},
    "zh-CN": {"sign_in": "登录", "publish": "发布", "published": "已发布", "send": "发送"},
}


@pytest.mark.parametrize("locale", sorted(WORDS))
def test_a_workflow_is_built_by_touch_on_a_phone_and_answers(
    chat_live_server: Any, scripted_model: Any, browser: Any, locale: str
) -> None:
    words = WORDS[locale]
    server = chat_live_server
    scripted_model.set_script(
        lambda request: text_turn(
            "From the handbook." if PASSAGE in json.dumps(request.json) else "No passage."
        )
    )
    with server.client(server.admin_key) as client:
        kb = data(client.post("/api/core/dataset/create", json={"name": "Handbook"}))
        body = {"datasetId": kb, "name": "refunds", "text": PASSAGE}
        data(client.post("/api/core/dataset/collection/create/text", json=body))
        wait_ready(client, kb)
        app_id = data(client.post("/api/core/app/create", json=touch_flow_app("Phone flow")))

    context = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True, locale=locale)
    page = context.new_page()
    page.on("dialog", lambda dialog: dialog.accept())
    try:
        sign_in(page, server.base_url, server.admin_key, words["sign_in"])
        build_by_touch(page, f"{server.base_url}/apps/{app_id}/workflow", "Handbook", MODEL)
        quote_search_results_in_the_sheet(page)
        page.tap("[data-testid=inspector] button[aria-label=Close]")
        page.tap(f".wf-bar button:has-text('{words['publish']}')")
        page.wait_for_selector(f"[data-testid=editor-note]:has-text('{words['published']}')")

        page.goto(f"{server.base_url}/chat/{app_id}")
        page.fill("textarea[name=message]", "When do refunds arrive?")
        page.tap(f"button:has-text('{words['send']}')")
        answer = page.wait_for_selector(".msg.ai[data-done='1'] .answer", timeout=30_000)
        assert answer.inner_text() == "From the handbook."
    finally:
        context.close()

    with server.client(server.admin_key) as client:
        saved = data(client.get("/api/core/app/detail", params={"appId": app_id}))
    kinds = {n["nodeId"]: n["flowNodeType"] for n in saved.get("nodes") or saved.get("modules")}
    pairs = {(kinds[e["source"]], kinds[e["target"]]) for e in saved["edges"]}
    assert pairs == {("workflowStart", "datasetSearchNode"), ("datasetSearchNode", "chatNode")}
