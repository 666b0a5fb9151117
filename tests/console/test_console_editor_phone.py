"""Issue 31 item 3: the workflow editor on a 390×844 touch phone. Chromium with touch emulation builds a
start → knowledge search → AI chat workflow by touch only — palette taps, tap-a-handle-then-another
connections, inputs set in the bottom sheet — publishes it, and the app answers from the scripted model
with the knowledge base's passage in its prompt; in an en-US and in a zh-CN browser.

At each step the layout is checked: the palette (a collapsible strip) and the inspector (a bottom sheet of
at most 60 % of the screen) never cover a node that should be visible, palette labels are not cut, and
every node handle is a touch target of at least 24 × 24 px on screen."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from console_support import data, sign_in, wait_ready

from fathom.testing import text_turn

MODEL = "scripted-chat"
PHONE = {"width": 390, "height": 844}
PASSAGE = "Refunds are paid to the original card within five working days."
SHOTS = Path(__file__).parents[2] / "build" / "console-screenshots"

Box = dict[str, float]


def _box(page: Any, selector: str) -> Box:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, selector
    return dict(box)


def _overlap(a: Box, b: Box) -> bool:
    return (
        a["x"] < b["x"] + b["width"] - 0.5
        and b["x"] < a["x"] + a["width"] - 0.5
        and a["y"] < b["y"] + b["height"] - 0.5
        and b["y"] < a["y"] + a["height"] - 0.5
    )


def _inside(inner: Box, outer: Box) -> bool:
    return (
        inner["x"] >= outer["x"] - 0.5
        and inner["y"] >= outer["y"] - 0.5
        and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + 0.5
        and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + 0.5
    )


def _node(kind: str) -> str:
    return f".react-flow__node:has([data-node-type={kind}])"


def _check_layout(page: Any, visible: list[str]) -> None:
    """The nodes named in ``visible`` lie wholly in the canvas, clear of the palette and the sheet; the
    palette's labels are whole; the sheet is at most 60 % of the screen; the page does not scroll sideways."""
    page.wait_for_timeout(250)  # the view is fitted 60 ms after a panel opens or closes
    canvas = _box(page, ".wf-canvas")
    covers = [sel for sel in ("[data-testid=palette]", "[data-testid=sheet]") if page.locator(sel).count()]
    for selector in visible:
        node = _box(page, selector)
        assert _inside(node, canvas), (selector, node, canvas)
        for cover in covers:
            assert not _overlap(node, _box(page, cover)), (selector, cover)
    if page.locator("[data-testid=sheet]").count():
        assert _box(page, "[data-testid=sheet]")["height"] <= 0.6 * PHONE["height"]
    for button in page.locator("[data-testid=palette] button").all():
        assert button.evaluate("b => b.scrollWidth <= b.clientWidth"), button.inner_text()
        box = button.bounding_box()
        assert box is not None and box["x"] + box["width"] <= PHONE["width"], button.inner_text()
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]


def _check_handles(page: Any) -> None:
    handles = page.locator(".react-flow__node .react-flow__handle").all()
    assert handles
    for handle in handles:
        box = handle.bounding_box()
        assert box is not None and box["width"] >= 24 and box["height"] >= 24, box


def _tap_connect(page: Any, source: str, target: str) -> None:
    edges = page.locator(".react-flow__edge").count()
    page.tap(f"{source} .react-flow__handle.source")
    page.wait_for_selector("[data-testid=connect-hint]")
    assert page.locator("[data-testid=sheet]").count() == 0  # tapping a handle opens no sheet
    page.tap(f"{target} .react-flow__handle.target")
    page.wait_for_selector("[data-testid=connect-hint]", state="detached")
    assert page.locator(".react-flow__edge").count() == edges + 1


def _add(page: Any, kind: str) -> None:
    page.tap("[data-testid=palette-toggle]")
    page.wait_for_selector("[data-testid=palette]")
    _check_layout(page, [".react-flow__node"])
    if kind == "chatNode":
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "phone-editor-palette.png"))
    page.tap(f"[data-template={kind}]")
    page.wait_for_selector(f"{_node(kind)}.selected")
    page.wait_for_selector("[data-testid=sheet] [data-testid=inspector]")
    assert page.locator("[data-testid=palette]").count() == 0  # closed to make room for the sheet
    _check_layout(page, [_node(kind)])


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
    question = {"key": "userChatInput", "label": "User question", "valueType": "string"}
    start = {
        "nodeId": "workflowStartNodeId",
        "flowNodeType": "workflowStart",
        "name": "Start",
        "position": {"x": 0, "y": 0},
        "inputs": [{**question, "renderTypeList": ["reference", "textarea"]}],
        "outputs": [{**question, "id": "userChatInput", "type": "static"}],
    }
    with server.client(server.admin_key) as client:
        kb = data(client.post("/api/core/dataset/create", json={"name": "Handbook"}))
        body = {"datasetId": kb, "name": "refunds", "text": PASSAGE}
        data(client.post("/api/core/dataset/collection/create/text", json=body))
        wait_ready(client, kb)
        app = {"name": "Phone flow", "type": "advanced", "nodes": [start], "edges": [], "chatConfig": {}}
        app_id = data(client.post("/api/core/app/create", json=app))

    context = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True, locale=locale)
    page = context.new_page()
    page.on("dialog", lambda dialog: dialog.accept())
    try:
        sign_in(page, server.base_url, server.admin_key, words["sign_in"])
        page.goto(f"{server.base_url}/apps/{app_id}/workflow")
        page.wait_for_selector(".react-flow__node [data-node-type=workflowStart]")
        assert page.locator("[data-testid=palette]").count() == 0  # a phone opens with the palette closed
        assert page.locator("[data-testid=sheet]").count() == 0
        _check_layout(page, [_node("workflowStart")])

        _add(page, "datasetSearchNode")
        page.tap("[data-testid=sheet-handle]")  # the sheet drops to its title row, and back
        page.wait_for_selector("[data-testid=sheet].low")
        assert _box(page, "[data-testid=sheet]")["height"] < 100
        page.tap("[data-testid=sheet-handle]")
        page.wait_for_selector("[data-testid=sheet]:not(.low)")
        page.tap("[data-testid=inspector] label:has-text('Handbook') input")
        assert page.locator("[data-testid=inspector] label:has-text('Handbook') input").is_checked()
        page.tap("[data-testid=inspector] button[aria-label=Close]")
        page.wait_for_selector("[data-testid=sheet]", state="detached")

        _add(page, "chatNode")
        page.wait_for_selector("[data-testid=inspector] select[name=input-model]:not([disabled])")
        page.select_option("[data-testid=inspector] select[name=input-model]", MODEL)
        page.tap("[data-testid=inspector] button[aria-label=Close]")
        page.wait_for_selector("[data-testid=sheet]", state="detached")
        everything = [_node("workflowStart"), _node("datasetSearchNode"), _node("chatNode")]
        _check_layout(page, everything)
        _check_handles(page)

        _tap_connect(page, _node("workflowStart"), _node("datasetSearchNode"))
        page.tap(f"{_node('datasetSearchNode')} .react-flow__handle.source")  # a tap on the canvas cancels
        page.wait_for_selector("[data-testid=connect-hint]")
        page.tap(".react-flow__pane", position={"x": 20, "y": 20})
        page.wait_for_selector("[data-testid=connect-hint]", state="detached")
        _tap_connect(page, _node("datasetSearchNode"), _node("chatNode"))
        _check_layout(page, everything)
        if locale == "en-US":  # docs/console.md shows the English console
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SHOTS / "phone-editor-built-by-touch.png"))

        page.tap(f"{_node('chatNode')} .wf-node-head")
        page.wait_for_selector("[data-testid=sheet] [data-testid=inspector]")
        _check_layout(page, [_node("chatNode")])
        quotes = page.locator("[data-testid=ref-quoteQA] option[value$='|quoteQA']")  # search › Quotes
        page.select_option("[data-testid=ref-quoteQA]", value=quotes.get_attribute("value"))
        if locale == "en-US":
            page.screenshot(path=str(SHOTS / "phone-editor-sheet.png"))
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
