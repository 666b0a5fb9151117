"""Browser checks of the console for daily use, each at desktop (1440×900) and phone (390×844) size:
the phone layout, a failing model shown in the answer, the demo app answering with readable passages,
English names and messages, keys (named, no self-revoke, an app key sees only its chat), app cards,
Esc, plurals and honest search settings.

One server (its chat model points at a closed port: the model server is down) and one browser for the
whole module."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from console_support import browser_unavailable, data, launch_chromium, sign_in, wait_ready
from live_support import free_port, start_live_server

from fathom.config import Settings
from fathom.demo import DEMO_APP_NAME, INTRO_TEXT, seed_demo
from fathom.platform import Platform
from fathom.store.protocols import UsageRecord
from run_apart import run_apart

DESKTOP = {"width": 1440, "height": 900}
PHONE = {"width": 390, "height": 844}
VIEWPORTS = {"desktop": DESKTOP, "phone": PHONE}
SHOTS = Path(__file__).parents[2] / "build" / "console-screenshots"  # docs/images/console/ copies them
GUIDE = (
    "# Travel guide\n\n## Visas\n\nTrips to Japan of up to ninety days need no visa for EU citizens.\n\n"
    "## Luggage\n\nEach traveller may check one bag of 23 kg on long-haul flights.\n"
)
POLICY = "Business class is allowed for flights longer than six hours. Economy otherwise."


def _in_thread(server: Any, work: Any) -> Any:
    """Run ``work(platform)`` on a second platform of the server's data, in another thread (the
    browser owns this thread's event loop)."""

    async def main() -> Any:
        platform = Platform.build(server.platform.settings)
        try:
            return await work(platform)
        finally:
            await platform.db.close()

    return run_apart(main(), 60)


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    reason = browser_unavailable()
    if reason:
        print(f"SKIP console browser tests: {reason}")
        pytest.skip(reason)
    root = tmp_path_factory.mktemp("daily")
    settings = Settings(
        data_dir=root / "data",
        port=free_port(),
        workers=1,
        openai_base_url=f"http://127.0.0.1:{free_port()}/v1",  # nothing listens: the model is down
        chat_model="down-model",
    )
    servers = start_live_server(settings)
    server = next(servers)
    team, member = server.boot.team_id, server.boot.member_id

    async def setup(platform: Platform) -> dict[str, Any]:
        demo = await seed_demo(platform, team, member, [("guide.md", GUIDE)])
        app = await platform.apps.create_app(team, "Helpdesk")
        for tokens in (1200, 800):
            record = UsageRecord(team, app.id, "api", "AI chat", "m", tokens, 300, total_points=0)
            await platform.usage.record(record)
        _, app_key = await platform.api_keys.create_key(team, member, name="demo only", app_id=demo.app_id)
        return {"demo": demo, "helpdesk": app.id, "app_key": app_key}

    seeded = _in_thread(server, setup)
    with server.client(server.admin_key) as client:
        kb = data(client.post("/api/core/dataset/create", json={"name": "Travel"}))
        body = {"datasetId": kb, "name": "policy", "text": POLICY}
        data(client.post("/api/core/dataset/collection/create/text", json=body))
        config = {
            "systemPrompt": "Answer from the policy.",
            "datasets": [{"datasetId": kb}],
            "datasetSearchSetting": {"searchMode": "mixedRecall", "similarity": 0, "limit": 3000},
        }
        app = data(
            client.post(
                "/api/core/app/create", json={"name": "Travel desk", "type": "simple", "simpleConfig": config}
            )
        )
        data(client.post("/api/core/app/version/publish", json={"appId": app}))
        wait_ready(client, kb)
        wait_ready(client, seeded["demo"].dataset_id)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            yield {"server": server, "browser": browser, "kb": kb, "travel": app, **seeded}
        finally:
            browser.close()
            servers.close()


def _page(env: dict[str, Any], viewport: dict[str, int], key: str | None = None) -> Any:
    page = env["browser"].new_page(viewport=viewport)
    page.on("dialog", lambda dialog: dialog.accept())
    sign_in(page, env["server"].base_url, key or env["server"].admin_key)
    return page


def _inside(page: Any, selector: str) -> None:
    """The element is scrolled to and then lies wholly inside the viewport."""
    element = page.locator(selector).first
    element.scroll_into_view_if_needed()
    box = element.bounding_box()
    size = page.viewport_size
    assert box is not None, selector
    assert box["x"] >= 0 and box["x"] + box["width"] <= size["width"] + 0.5, (selector, box, size)
    assert box["y"] >= 0 and box["y"] + box["height"] <= size["height"] + 0.5, (selector, box, size)


def _shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / name))


def _menu(page: Any, label: str, phone: bool) -> None:
    if phone:
        page.click("button.menu-toggle")
    page.click(f"nav >> text={label}")


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_layout_fits_the_screen(env: dict[str, Any], size: str) -> None:
    server, phone = env["server"], size == "phone"
    page = env["browser"].new_page(viewport=VIEWPORTS[size])
    try:
        page.goto(server.base_url + "/")
        _inside(page, ".login-card")
        if phone:
            _shot(page, "phone-01-sign-in.png")
        page.fill("input[name=apiKey]", server.admin_key)
        page.click("button:has-text('Sign in')")
        page.wait_for_selector("nav.sidebar")
        assert page.locator("nav >> text=Knowledge").is_visible() is not phone
        assert page.locator("button.menu-toggle").is_visible() is phone

        _menu(page, "Knowledge", phone)
        page.click(".tile:has-text('Travel')")
        page.wait_for_selector("tr[data-collection=policy]")
        _inside(page, ".page-head button:has-text('Delete')")
        wrap = page.locator(".table-wrap").first
        box = wrap.bounding_box()
        assert box["x"] + box["width"] <= VIEWPORTS[size]["width"] + 0.5
        if phone:  # the table scrolls inside its card instead of widening the page
            assert wrap.evaluate("el => el.scrollWidth > el.clientWidth")
            assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]

        _menu(page, "Apps", phone)
        page.click(".tile:has-text('Travel desk') .muted.grow")  # the card's centre opens the app
        page.wait_for_selector("h2:has-text('Simple app')")
        _inside(page, "button:has-text('Save & publish')")
        _inside(page, ".page-head button:has-text('Delete')")

        page.click("button:has-text('Chat')")
        page.wait_for_selector(".chat-head:has-text('Travel desk')")
        _inside(page, "textarea[name=message]")
        _inside(page, ".chat-head")
        if phone:
            assert not page.locator(".hist").is_visible()
            page.click("button.history-toggle")
            page.wait_for_selector(".hist", state="visible")
            page.click("button.history-toggle")
        else:
            assert page.locator(".hist").is_visible()
    finally:
        page.close()


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_a_failing_model_is_shown_in_english_in_the_answer(env: dict[str, Any], size: str) -> None:
    page = _page(env, VIEWPORTS[size])
    try:
        page.goto(f"{env['server'].base_url}/chat/{env['travel']}")
        page.fill("textarea[name=message]", "Can I fly business to Tokyo?")
        page.keyboard.press("Enter")
        error = page.wait_for_selector(".msg.ai[data-done='1'] [data-testid=node-errors]", timeout=30_000)
        text = error.inner_text()
        assert text.startswith("AI chat: "), text
        assert not re.search(r"[\u4e00-\u9fff]", page.locator(".messages").inner_text())
        _inside(page, "[data-testid=node-errors]")
        _inside(page, "textarea[name=message]")
        page.reload()  # the failure is in the chat's records too
        page.wait_for_selector(".msg.ai [data-testid=node-errors]:has-text('AI chat: ')")
    finally:
        page.close()


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_demo_app_answers_with_readable_passages_and_sources(env: dict[str, Any], size: str) -> None:
    page = _page(env, VIEWPORTS[size])
    try:
        page.goto(f"{env['server'].base_url}/chat/{env['demo'].app_id}")
        page.wait_for_selector(f".chat-head:has-text('{DEMO_APP_NAME}')")
        page.fill("textarea[name=message]", "Do I need a visa for Japan?")
        page.keyboard.press("Enter")
        answer = page.wait_for_selector(".msg.ai[data-done='1'] .answer", timeout=30_000)
        text = answer.inner_text()
        assert INTRO_TEXT in text and "ninety days" in text, text
        assert '"sourceName"' not in text and '"q"' not in text and "\\n" not in text, text
        assert page.locator(".msg.ai .answer blockquote").count() >= 1
        assert page.locator(".msg.ai .answer strong:has-text('[1] guide.md')").count() == 1
        page.wait_for_selector(".quote-chip:has-text('guide.md')")
        _inside(page, ".quote-chip")
        page.click(".quote-chip")
        page.wait_for_selector(".modal")
        page.keyboard.press("Escape")  # Esc closes the dialog
        page.wait_for_selector(".modal", state="detached")
    finally:
        page.close()


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_keys_are_named_the_signed_in_key_is_kept_and_usage_is_formatted(
    env: dict[str, Any], size: str
) -> None:
    phone = size == "phone"
    page = _page(env, VIEWPORTS[size])
    try:
        _menu(page, "Keys & usage", phone)
        page.wait_for_selector("tr[data-key=admin]")
        assert page.locator("button:has-text('Create key')").is_disabled()
        page.fill("input[name=keyName]", "   ")
        assert page.locator("button:has-text('Create key')").is_disabled()
        admin = page.locator("tr[data-key=admin]")
        assert admin.locator("button:has-text('Revoke')").count() == 0
        assert "signed in with this key" in admin.inner_text()
        assert page.locator("tr[data-key='demo only'] button:has-text('Revoke')").count() == 1
        usage = page.locator(".card:has(h2:has-text('Usage'))")
        row = usage.locator("tr:has-text('Helpdesk')")
        assert "2,000" in row.inner_text(), row.inner_text()
        page.wait_for_selector("[data-testid=points-note]:has-text('input_price')")
    finally:
        page.close()


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_an_app_key_sees_only_its_app_chat(env: dict[str, Any], size: str) -> None:
    page = _page(env, VIEWPORTS[size], key=env["app_key"])
    try:
        if size == "phone":
            page.click("button.menu-toggle")
        nav = page.locator("nav.sidebar a.nav")
        assert [nav.nth(i).inner_text().strip() for i in range(nav.count())] == ["Chat"]
        page.wait_for_selector(f".chat-head:has-text('{DEMO_APP_NAME}')")
        assert page.locator("select[aria-label=App]").count() == 0
        assert page.locator("text=Edit app").count() == 0
        page.goto(env["server"].base_url + "/knowledge")  # a stale link still lands on the app's chat
        page.wait_for_selector(f".chat-head:has-text('{DEMO_APP_NAME}')")
        assert page.locator("text=Loading…").count() == 0
    finally:
        page.close()


def test_wrong_key_message_is_english_and_search_settings_are_honest(env: dict[str, Any]) -> None:
    server = env["server"]
    page = env["browser"].new_page(viewport=DESKTOP)
    try:
        page.goto(server.base_url + "/")
        page.fill("input[name=apiKey]", "fathom-" + "Q" * 40)
        page.click("button:has-text('Sign in')")
        error = page.wait_for_selector(".login .error").inner_text()
        assert error.startswith("Invalid API key"), error
        page.close()
        page = _page(env, DESKTOP)
        page.goto(f"{server.base_url}/apps")
        badge = page.locator(".tile:has-text('Ask the Fathom docs') .badge").inner_text()
        assert badge == "Workflow"
        page.goto(f"{server.base_url}/knowledge/{env['kb']}/search")
        page.fill("textarea[name=query]", "business class")
        assert page.locator("input[name=similarity]").is_disabled()  # hybrid without rerank
        page.wait_for_selector("[data-testid=similarity-note]")
        page.wait_for_selector("[data-testid=rerank-note]")  # the model list has no rerank model
        assert page.locator("input[name=usingReRank]").is_disabled()
        page.click("button:has-text('Search')")
        summary = page.wait_for_selector("[data-testid=search-summary]").inner_text()
        count = page.locator("[data-testid=search-hit]").count()
        assert summary.startswith(f"{count} result{'' if count == 1 else 's'} in"), summary
        page.select_option("select[name=searchMode]", "embedding")
        assert page.locator("input[name=similarity]").is_enabled()
    finally:
        page.close()


def _fastgpt_template() -> dict[str, Any]:
    """A workflow as FastGPT's template files wrap it, with FastGPT's i18n-key labels and hidden inputs."""
    start = {
        "nodeId": "workflowStartNodeId",
        "flowNodeType": "workflowStart",
        "name": "流程开始",
        "position": {"x": 0, "y": 0},
        "inputs": [
            {
                "key": "userChatInput",
                "label": "core.module.input.label.user question",
                "renderTypeList": ["reference", "textarea"],
                "valueType": "string",
            }
        ],
        "outputs": [
            {
                "id": "userChatInput",
                "key": "userChatInput",
                "label": "core.module.input.label.user question",
                "valueType": "string",
                "type": "static",
            }
        ],
    }
    chat = {
        "nodeId": "chat1",
        "flowNodeType": "chatNode",
        "name": "AI 对话",
        "position": {"x": 360, "y": 0},
        "inputs": [
            {
                "key": "model",
                "label": "core.module.input.label.aiModel",
                "renderTypeList": ["settingLLMModel", "reference"],
                "valueType": "string",
                "value": "gpt-4o-mini",
            },
            {
                "key": "systemPrompt",
                "label": "core.ai.Prompt",
                "renderTypeList": ["textarea", "reference"],
                "valueType": "string",
                "value": "",
            },
            {
                "key": "isResponseAnswerText",
                "label": "",
                "renderTypeList": ["hidden"],
                "valueType": "boolean",
                "value": True,
            },
            {
                "key": "quoteTemplate",
                "label": "",
                "renderTypeList": ["hidden"],
                "valueType": "string",
                "value": "",
            },
            {
                "key": "userChatInput",
                "label": "core.module.input.label.user question",
                "renderTypeList": ["reference", "textarea"],
                "valueType": "string",
                "value": ["workflowStartNodeId", "userChatInput"],
            },
        ],
        "outputs": [
            {
                "id": "answerText",
                "key": "answerText",
                "label": "core.module.output.label.Ai response content",
                "valueType": "string",
                "type": "static",
            }
        ],
    }
    edge = {
        "source": "workflowStartNodeId",
        "target": "chat1",
        "sourceHandle": "workflowStartNodeId-source-right",
        "targetHandle": "chat1-target-left",
    }
    return {"name": "Simple chat", "workflow": {"nodes": [start, chat], "edges": [edge], "chatConfig": {}}}


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_editor_imports_a_wrapped_template_reads_in_english_undoes_and_guards_unsaved_work(
    env: dict[str, Any], size: str
) -> None:
    server = env["server"]
    with server.client(server.admin_key) as client:
        start = {
            "nodeId": "workflowStartNodeId",
            "flowNodeType": "workflowStart",
            "name": "Start",
            "position": {"x": 0, "y": 0},
            "inputs": [],
            "outputs": [],
        }
        body = {
            "name": f"Imported {size}",
            "type": "advanced",
            "nodes": [start],
            "edges": [],
            "chatConfig": {},
        }
        app_id = data(client.post("/api/core/app/create", json=body))
    page = env["browser"].new_page(viewport=VIEWPORTS[size])
    dialogs: list[str] = []

    def on_dialog(dialog: Any) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss() if len(dialogs) == 1 else dialog.accept()

    page.on("dialog", on_dialog)
    try:
        sign_in(page, server.base_url, server.admin_key)
        page.goto(f"{server.base_url}/apps/{app_id}/workflow")
        page.wait_for_selector(".react-flow__node [data-node-type=workflowStart]")
        assert page.locator("[data-testid=unsaved]").count() == 0
        page.click("button:has-text('Import')")
        page.fill(".wf-inspector textarea", json.dumps(_fastgpt_template()))
        page.click(".wf-inspector button.primary:has-text('Import')")
        page.wait_for_selector(".react-flow__node [data-node-type=chatNode]")
        page.wait_for_selector("[data-testid=unsaved]")
        canvas = page.locator(".wf-canvas").inner_text()
        assert "AI chat" in canvas and "AI 对话" not in canvas and "core.module" not in canvas, canvas
        assert "isResponseAnswerText" not in canvas

        page.click(".react-flow__node[data-id=chat1] .wf-node-head")
        inspector = page.locator("[data-testid=inspector]")
        page.wait_for_selector("[data-testid=inspector]")
        if size == "phone":  # the inspector is a bottom sheet below the node it edits, never over it
            page.wait_for_timeout(250)  # the view is fitted 60 ms after the sheet opens
            node = page.locator(".react-flow__node[data-id=chat1]").bounding_box()
            sheet = page.locator("[data-testid=sheet]").bounding_box()
            canvas = page.locator(".wf-canvas").bounding_box()
            assert node and sheet and canvas and sheet["height"] <= 0.6 * PHONE["height"]
            assert node["y"] >= canvas["y"] and node["y"] + node["height"] <= sheet["y"] + 0.5, (node, sheet)
        text = inspector.inner_text() + " ".join(inspector.locator("option").all_inner_texts())
        assert "Model" in text and "User question" in text and "Start › User question" in text, text
        assert "core." not in text and "isResponseAnswerText" not in text and "quoteTemplate" not in text, (
            text
        )
        page.click("[data-testid=advanced-toggle]")
        assert "Send answer to the user" in inspector.inner_text()

        page.click("button[aria-label=Undo]")  # undo the import: only Start again
        page.wait_for_selector(".react-flow__node [data-node-type=chatNode]", state="detached")
        assert page.locator(".react-flow__node").count() == 1
        page.click("button[aria-label=Redo]")
        page.wait_for_selector(".react-flow__node [data-node-type=chatNode]")
        page.locator(".react-flow__pane").click()
        page.keyboard.press("Control+z")
        page.wait_for_selector(".react-flow__node [data-node-type=chatNode]", state="detached")
        page.keyboard.press("Control+Shift+z")
        page.wait_for_selector(".react-flow__node [data-node-type=chatNode]")

        page.click(".wf-bar a:has-text('App')")  # unsaved: asks; dismissed, the editor stays
        assert dialogs and "without saving" in dialogs[0]
        assert page.url.endswith("/workflow")
        page.click("button:has-text('Save draft')")
        page.wait_for_selector("[data-testid=editor-note]:has-text('Draft saved')")
        assert page.locator("[data-testid=unsaved]").count() == 0
        page.click(".wf-bar a:has-text('App')")  # saved: leaves without asking
        page.wait_for_selector("h1:has-text('Imported')")
        assert len(dialogs) == 1
    finally:
        page.close()
