"""Browser tour of the workflow editor: create a workflow app, add a Reply node from the catalogue,
connect it to Start by dragging between handles, reference Start's output in its text, save, run the
canvas and watch the node statuses; then import a FastGPT JSON export and publish it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from console_support import USER_SELECT_APP, sign_in


def settled_box(page: Any, selector: str) -> Any:
    """The element's box once the view stops moving (adding a node refits the view some 30 ms later; on a
    busy machine later still, and a drag begun before it starts from where the handle no longer is)."""
    box = page.locator(selector).bounding_box()
    for _ in range(50):
        page.wait_for_timeout(100)
        now = page.locator(selector).bounding_box()
        if now == box:
            return now
        box = now
    raise AssertionError(f"{selector} kept moving for 5 s")


def drag(page: Any, source: str, target: str) -> None:
    start = settled_box(page, source)
    end = settled_box(page, target)
    page.mouse.move(start["x"] + start["width"] / 2, start["y"] + start["height"] / 2)
    page.mouse.down()
    page.mouse.move(end["x"] + end["width"] / 2, end["y"] + end["height"] / 2, steps=12)
    page.mouse.up()


def test_build_connect_run_import_and_publish_a_workflow(
    live_server: Any, browser: Any, screenshots: Path
) -> None:
    page = browser.new_page(viewport={"width": 1440, "height": 860})
    try:
        sign_in(page, live_server.base_url, live_server.admin_key)
        page.click("nav >> text=Apps")
        page.fill("input[name=appName]", "Echo")
        page.select_option("select[name=appType]", "workflow")
        page.click("button:has-text('Create app')")
        page.wait_for_selector(".react-flow__node [data-node-type=workflowStart]")

        page.click("[data-template=answerNode]")
        reply = page.locator(".react-flow__node:has([data-node-type=answerNode])")
        reply_id = reply.get_attribute("data-id")
        assert page.locator(".react-flow__edge").count() == 0
        drag(
            page,
            ".react-flow__handle[data-handleid='workflowStartNodeId-source-right']",
            f".react-flow__handle[data-handleid='{reply_id}-target-left']",
        )
        page.wait_for_selector(".react-flow__edge", state="attached")
        assert page.locator(".react-flow__edge").count() == 1

        reply.click()
        page.fill("[data-testid=input-text]", "You said: ")
        page.select_option("[data-testid=inspector] select.small", label="Start › User question")
        assert (
            page.input_value("[data-testid=input-text]")
            == "You said: {{$workflowStartNodeId.userChatInput$}}"
        )
        page.click("button:has-text('Save draft')")
        page.wait_for_selector("[data-testid=editor-note]:has-text('Draft saved')")

        page.click("button:has-text('Run')")
        page.fill("textarea[name=runQuery]", "hello")
        page.click("button:has-text('Run the canvas')")
        page.wait_for_selector("[data-testid=run-panel] .chunk:has-text('You said: hello')")
        page.wait_for_selector(f".react-flow__node[data-id='{reply_id}'] .wf-node.done")
        page.click("[data-testid=run-panel] button:has-text('Close')")

        page.click("button:has-text('Variables')")
        page.click("[data-testid=settings-panel] button:has-text('+ Variable')")
        page.fill("[data-testid=settings-panel] input[placeholder=key]", "city")
        page.click("[data-testid=settings-panel] button:has-text('Close')")
        reply.click()
        options = page.locator("[data-testid=inspector] select.small option").all_inner_texts()
        assert "Variable › city" in options

        page.click("button:has-text('Import')")
        page.fill(".wf-inspector textarea", json.dumps(USER_SELECT_APP))
        page.click(".wf-inspector button.primary:has-text('Import')")
        page.wait_for_selector(".react-flow__node:has([data-node-type=userSelect])")
        assert page.locator(".react-flow__node").count() == 4
        assert page.locator(".react-flow__edge").count() == 3
        page.click("button:has-text('Publish')")
        page.wait_for_selector("[data-testid=editor-note]:has-text('Published')")
        page.click("button:has-text('Versions')")
        page.wait_for_selector(".wf-inspector:has-text('version')")
        page.screenshot(path=str(screenshots / "10-workflow-imported.png"))
    finally:
        page.close()
