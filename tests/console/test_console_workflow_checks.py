"""The workflow checks in the editor (issue 31, the issue's own scenario): an AI chat node added and left
unconnected, its required "User question" cleared. Save keeps the draft and outlines the node; Publish is
refused, the node is outlined in red and the list (and the node's hover text) says what to fix; once
connected and given the question it publishes, and the API answers with the scripted model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from console_support import LONE_CHAT, START, data, sign_in
from test_console_workflow import drag

from fathom.testing import text_turn


def test_broken_workflow_is_outlined_refused_at_publish_and_publishes_once_fixed(
    chat_live_server: Any, browser: Any, scripted_model: Any
) -> None:
    server = chat_live_server
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    try:
        sign_in(page, server.base_url, server.admin_key)
        page.click("nav >> text=Apps")
        page.fill("input[name=appName]", "Checked")
        page.select_option("select[name=appType]", "workflow")
        page.click("button:has-text('Create app')")
        page.wait_for_selector(".react-flow__node [data-node-type=workflowStart]")
        app_id = page.url.rstrip("/").split("/")[-2]

        page.click("[data-template=chatNode]")
        chat = page.locator(".react-flow__node:has([data-node-type=chatNode])")
        chat_id = chat.get_attribute("data-id")
        page.click("[data-testid=inspector] button:has-text('type a value')")  # the question is now empty
        assert page.input_value("[data-testid=input-userChatInput]") == ""

        page.click("button:has-text('Save draft')")
        page.wait_for_selector("[data-testid=editor-note]:has-text('problems to fix before publishing')")
        outlined = f".react-flow__node[data-id='{chat_id}'] .wf-node.invalid"
        page.wait_for_selector(outlined)

        page.click("[data-testid=problem-list] button[aria-label=Close]")
        page.wait_for_selector("[data-testid=problem-list]", state="detached")
        page.click("button:has-text('Publish')")
        page.wait_for_selector("[data-testid=editor-error]:has-text('Not published: fix the problems below')")
        page.wait_for_selector(outlined)
        problems = page.locator("[data-testid=problem]")
        assert problems.count() == 2
        texts = problems.all_inner_texts()
        assert "AI chat: not connected: no path from the start node reaches it" in texts[0]
        assert "AI chat › User question: User question is required and not set" in texts[1]
        hover = page.get_attribute(f".react-flow__node[data-id='{chat_id}'] .wf-node", "title") or ""
        assert "not connected" in hover and "User question is required" in hover
        assert page.locator("[data-testid=editor-note]:has-text('Published.')").count() == 0

        # fix it: connect Start to the AI chat node and give it Start's question
        drag(
            page,
            ".react-flow__handle[data-handleid='workflowStartNodeId-source-right']",
            f".react-flow__handle[data-handleid='{chat_id}-target-left']",
        )
        page.wait_for_selector(".react-flow__edge", state="attached")
        problems.first.locator("button").click()  # picks (selects) the node at fault
        question = page.locator("[data-testid=inspector] .col:has(> [data-testid=input-userChatInput])")
        question.locator("button:has-text('use upstream output')").click()
        page.select_option("[data-testid=ref-userChatInput]", label="Start › User question")
        page.click("button:has-text('Publish')")
        page.wait_for_selector("[data-testid=editor-note]:has-text('Published.')")
        assert page.locator("[data-testid=problem-list]").count() == 0
        assert page.locator(".wf-node.invalid").count() == 0
    finally:
        page.close()

    scripted_model.set_script(lambda request: text_turn("Connected now."))
    with server.client(server.admin_key) as client:
        reply = client.post(
            "/api/v1/chat/completions",
            json={"appId": app_id, "messages": [{"role": "user", "content": "hello"}]},
        ).json()
    assert reply["choices"][0]["message"]["content"] == "Connected now."


def test_a_refused_publish_reads_in_chinese_on_a_phone(
    chat_live_server: Any, browser: Any, screenshots: Path
) -> None:
    """The problems' fixed phrases are the console's: a Chinese browser reads them in Chinese."""
    server = chat_live_server
    with server.client(server.admin_key) as client:
        body = {"name": "检查", "type": "advanced", "nodes": [START], "edges": [], "chatConfig": {}}
        app_id = data(client.post("/api/core/app/create", json=body))
        broken = {"appId": app_id, "nodes": [START, LONE_CHAT], "edges": [], "chatConfig": {}}
        data(client.post("/api/core/app/update", json=broken))  # a draft may keep its problems
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, locale="zh-CN", is_mobile=True, has_touch=True
    )
    page = context.new_page()
    try:
        page.goto(server.base_url + "/")
        page.fill("input[name=apiKey]", server.admin_key)
        page.click("button:has-text('登录')")
        page.wait_for_selector("nav.sidebar")
        page.goto(f"{server.base_url}/apps/{app_id}/workflow")
        page.wait_for_selector(".react-flow__node[data-id='aiChat']")
        page.click("button:has-text('发布')")
        page.wait_for_selector("[data-testid=editor-error]:has-text('未发布：请修复下列问题后再发布。')")
        page.wait_for_selector(".react-flow__node[data-id='aiChat'] .wf-node.invalid")
        heading = page.locator("[data-testid=problem-list] b").inner_text()
        assert heading == "发布前需修复 2 处问题：见红框标出的节点。", heading
        texts = page.locator("[data-testid=problem]").all_inner_texts()
        assert len(texts) == 2, texts
        assert "未连接：从开始节点到不了这里，它永远不会运行；请把它连入流程或删除" in texts[0], texts
        assert "为必填项，尚未设置：" in texts[1], texts
        assert not any(word in " ".join(texts) for word in ("not connected", "required", "fill it in")), texts
        page.screenshot(path=str(screenshots / "31-workflow-publish-refused-phone-zh.png"))
    finally:
        context.close()
