"""The console's two languages, at desktop and phone size: a browser whose language is Simplified Chinese
gets the Chinese console (navigation, sign-in, pages, chunking, model picker), FastGPT's i18n-key labels
and default node names of an imported workflow read in Chinese; the switch to English is kept after a
reload, and English is what an English browser gets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from console_support import data, open_node, sign_in, wait_for_inspector_field

VIEWPORTS = {"desktop": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}
TEMPLATE = Path(__file__).parents[1] / "chat" / "fastgpt_apps" / "fg-simpleDatasetChat.json"


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_chinese_browser_gets_the_chinese_console_and_the_switch_is_kept(
    module_live_server: Any, browser: Any, size: str
) -> None:
    server = module_live_server
    workflow = json.loads(TEMPLATE.read_text(encoding="utf-8"))["workflow"]
    with server.client(server.admin_key) as client:
        body = {"name": f"模板 {size}", "type": "advanced", **workflow}
        app_id = data(client.post("/api/core/app/create", json=body))
    context = browser.new_context(viewport=VIEWPORTS[size], locale="zh-CN")
    page = context.new_page()
    try:
        page.goto(server.base_url + "/")
        page.wait_for_selector("button:has-text('登录')")
        sign_in_zh = page.locator(".login-card").inner_text()
        assert "API 密钥" in sign_in_zh, sign_in_zh
        page.fill("input[name=apiKey]", server.admin_key)
        page.click("button:has-text('登录')")
        page.wait_for_selector("nav.sidebar")
        nav = page.locator("nav.sidebar").text_content() or ""
        assert "知识库" in nav and "应用" in nav and "Knowledge" not in nav, nav
        page.goto(f"{server.base_url}/knowledge")
        page.wait_for_selector("h1:has-text('知识库')")
        page.fill("input[name=datasetName]", "指南")
        page.click("button:has-text('创建')")
        page.wait_for_selector("h1:has-text('指南')")
        assert "分块" in page.locator("[data-testid=chunk-settings]").inner_text()
        page.click(".tabs >> text=搜索测试")
        page.wait_for_selector("form.search-form button.primary:has-text('搜索')")
        pages = (
            []
            if size == "phone"
            else [  # the zh tour visits these at phone size
                ("/apps", "h1:has-text('应用')", "Create app"),
                ("/keys", "h2:has-text('API 密钥')", "Create key"),
                (f"/apps/{app_id}", "h1:has-text('模板')", "Workflow editor"),
                (f"/chat/{app_id}", "textarea[name=message]", "New chat"),
            ]
        )
        for path, ready, english in pages:
            page.goto(server.base_url + path)
            page.wait_for_selector(ready)
            page.wait_for_timeout(300)
            text = page.locator("main").inner_text()
            assert english not in text, (path, text)

        page.goto(f"{server.base_url}/apps/{app_id}/workflow")
        page.wait_for_selector(".react-flow__node [data-node-type=chatNode]")
        canvas = page.locator(".wf-canvas").inner_text()
        assert "AI 对话" in canvas and "知识库搜索" in canvas and "core.module" not in canvas, canvas
        open_node(page, ".react-flow__node [data-node-type=chatNode]")
        # the model list is one request per page load; on a machine busy with the parallel suite it was
        # seen to take longer than the 30 s default twice (CI, 2026-12-03): it is waited for, not asserted
        wait_for_inspector_field(page, "select[name=input-model]:not([disabled])")
        inspector = page.locator("[data-testid=inspector]").inner_text()
        assert "AI 模型" in inspector and "用户问题" in inspector and "core." not in inspector, inspector
        assert page.locator("[data-testid=inspector] [data-testid=model-fallback]").count() == 1

        page.goto(f"{server.base_url}/knowledge")
        if size == "phone":
            page.click("button[aria-label=Menu]")  # the switch is in the menu on a phone
        page.click("nav [data-testid=lang-switch] button:has-text('English')")
        page.wait_for_selector("h1:has-text('Knowledge bases')")
        page.reload()
        page.wait_for_selector("h1:has-text('Knowledge bases')")
        assert "Knowledge" in (page.locator("nav.sidebar").text_content() or "")
    finally:
        context.close()

    english = browser.new_page(viewport=VIEWPORTS[size], locale="en-US")
    try:
        sign_in(english, server.base_url, server.admin_key)
        assert "Knowledge" in (english.locator("nav.sidebar").text_content() or "")
    finally:
        english.close()
