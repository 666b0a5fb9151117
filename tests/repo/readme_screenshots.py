"""The screenshots ``docs/console.md`` shows, taken in Chromium over the README walkthrough's server with the
data the walkthrough made (issue 31): the knowledge base *Handbook* and its *refunds* text, the simple app
*Helpdesk*, the share link, the keys, the seeded demo, the user ``root`` signed in with the printed password.

Each scene brings a page to what its picture shows, at desktop (1366×900) or phone (390×844) size, in an
en-US or a zh-CN browser; ``SCENES`` maps each picture's file name to its scene (a broken file imported
that fails; last, the README's scripted model stopped). Some scenes first make what their picture needs on
this server, with the console tests' own builders (``tests/console/console_support.py``): a workflow that
pauses on a user-select node, a workflow whose AI chat node is unconnected (refused at publish), a workflow
built by touch in the phone editor (touch-emulating browser). The README's scripted model only echoes, so
it cannot call a tool: the tool call that asks for a form is FastGPT's event stream served by the browser's
request router, as ``test_console_chat.py`` serves it, over this server's page and app.

An answer while a knowledge base is still indexing: a new knowledge base's text imported for QA training
while the README's scripted model is paused (``SIGSTOP``; the walkthrough's own process), so its training
cannot finish and the collection stays pending however fast or slow the machine is; the question is asked
then, and the model resumed only once the notice is on the page (the search ran), to write the answer.

A picture this server cannot reach would be a browser test's, named in ``SHOT_BY_CONSOLE_TESTS``, so every
picture has exactly one producer (``tests/repo/test_readme_walkthrough.py`` checks both lists)."""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "console"))  # the console tests' helpers, as their conftest has them

from console_support import (  # noqa: E402
    CHROMIUM_ARGS,
    LONE_CHAT,
    START,
    TOOL_CALL_ASKING_A_FORM,
    USER_SELECT_APP,
    browser_unavailable,
    build_by_touch,
    chromium_path,
    data,
    quote_search_results_in_the_sheet,
    touch_flow_app,
    wait_ready,
)

VIEWPORTS = {"desktop": {"width": 1366, "height": 900}, "phone": {"width": 390, "height": 844}}
LOCALES = {"en": "en-US", "zh": "zh-CN"}
TEMPLATE = ROOT / "tests" / "chat" / "fastgpt_apps" / "fg-simpleDatasetChat.json"
QUESTION = "When do refunds arrive?"
EN_PREVIEW, ZH_PREVIEW = "Preview chunks of returns.md", "预览 returns.md 的分块"


@dataclass
class Visit:
    """What a scene may use: the server, root's password, the README's app, the demo app, a client with the
    admin key, and the scenes' own notes."""

    base: str
    password: str
    app_id: str
    demo_app_id: str
    client: Any  # httpx.Client on base with the key
    stop_model: Callable[[], None]  # stops the README's scripted model (the last scenes show it down)
    pause_model: Callable[[bool], None]  # pauses (True) or resumes (False) the README's scripted model
    notes: dict[str, str] = field(default_factory=dict)


Scene = Callable[[Any, Visit], None]


def _handbook(page: Any, visit: Visit) -> None:
    page.goto(f"{visit.base}/knowledge")
    page.click(".tile:has-text('Handbook')")
    page.wait_for_selector("tr[data-collection=refunds][data-status=ready]")


def _search(page: Any, visit: Visit, search_tab: str) -> None:
    _handbook(page, visit)
    page.click(f".tabs >> text={search_tab}")
    page.fill("textarea[name=query]", "when do I get my money back")
    page.click("form.search-form button.primary")
    page.wait_for_selector("[data-testid=search-hit]:has-text('Refunds are paid')")


def _chunk_preview(page: Any, visit: Visit, preview: str) -> None:
    _handbook(page, visit)
    page.set_input_files(
        "[data-testid=file-input]",
        files=[{"name": "returns.md", "mimeType": "text/markdown", "buffer": RETURNS.encode()}],
    )
    page.check("input[name=chunkMode][value=custom]")
    page.fill("input[name=chunkSize]", "100")
    page.click(f"button:has-text('{preview}')")
    page.wait_for_selector("[data-testid=chunk-preview-summary]")
    page.wait_for_selector("[data-testid=preview-chunk]")


RETURNS = (
    "# Returns\n\n## Refunds\n\nRefunds are paid to the original card within five working days.\n\n"
    "## Exchanges\n\nAn unworn item may be exchanged within thirty days with its receipt.\n\n"
    "## Gift cards\n\nGift cards are neither refunded nor exchanged.\n"
)


def _chat(page: Any, visit: Visit, app_id: str, question: str) -> None:
    if app_id == visit.demo_app_id:  # the demo's knowledge base (this repository's docs/) indexed
        for dataset in data(visit.client.post("/api/core/dataset/list", json={})):
            if dataset["name"] != "Handbook" and dataset.get("type") != "folder":
                wait_ready(visit.client, dataset["_id"], timeout=600)
    page.goto(f"{visit.base}/chat/{app_id}")
    page.fill("textarea[name=message]", question)
    page.keyboard.press("Enter")
    page.wait_for_selector(".msg.ai[data-done='1']", timeout=60_000)
    page.wait_for_selector(".quote-chip")


def _template_app(visit: Visit) -> str:
    """A FastGPT template imported unchanged (its model, gpt-4o-mini, is not configured here)."""
    if "template" not in visit.notes:
        workflow = json.loads(TEMPLATE.read_text(encoding="utf-8"))["workflow"]
        body = {"name": "Handbook flow", "type": "advanced", "workflow": workflow}
        visit.notes["template"] = data(visit.client.post("/api/core/app/importWorkflow", json=body))
    return visit.notes["template"]


def _editor(page: Any, visit: Visit) -> None:
    page.goto(f"{visit.base}/apps/{_template_app(visit)}/workflow")
    page.wait_for_selector(".react-flow__node [data-node-type=chatNode]")
    page.click(".react-flow__controls-fitview")


def _inspect(page: Any, node_type: str) -> None:
    page.click(f".react-flow__node [data-node-type={node_type}] .wf-node-head")
    page.wait_for_selector("[data-testid=inspector]")


def _workflow_run(page: Any, visit: Visit, lang: str, details: bool = True) -> None:
    run, run_canvas = ("Run", "Run the canvas") if lang == "en" else ("运行", "运行画布")
    _editor(page, visit)
    _inspect(page, "datasetSearchNode")
    page.check("[data-testid=inspector] label:has-text('Handbook') input")
    page.click("[data-testid=inspector] button[aria-label=Close]")
    page.click(f".wf-bar button:has-text('{run}')")
    page.fill("textarea[name=runQuery]", QUESTION)
    page.click(f"button:has-text('{run_canvas}')")
    answer = f"You said: {QUESTION}"  # the scripted model echoes
    page.wait_for_selector(f"[data-testid=run-panel] .chunk:has-text('{answer}')", timeout=60_000)
    page.wait_for_selector(".react-flow__node:has([data-node-type=chatNode]) .wf-node.done")
    step = page.locator("[data-testid=node-step]").filter(has_text="AI chat" if lang == "en" else "AI 对话")
    if details:  # what the AI chat node read and produced
        step.locator("summary").click()


def _import_error(page: Any, visit: Visit) -> None:
    """A file that does not parse fails at once: its row shows the error and a Retry button."""
    _handbook(page, visit)
    pdf = {"name": "broken.pdf", "mimeType": "application/pdf", "buffer": b"%PDF-1.4 not really a pdf"}
    page.set_input_files("[data-testid=file-input]", files=[pdf])
    page.click("button:has-text('Import 1 file')")
    page.wait_for_selector("tr[data-collection='broken.pdf'][data-status=error] button:has-text('Retry')")


def _model_down(page: Any, visit: Visit) -> None:
    visit.stop_model()
    page.goto(f"{visit.base}/chat/{visit.app_id}")
    page.fill("textarea[name=message]", QUESTION)
    page.keyboard.press("Enter")
    page.wait_for_selector(".msg.ai[data-done='1'] [data-testid=node-errors]", timeout=60_000)


def _indexing_notice(page: Any, visit: Visit) -> None:
    """A simple app on a new knowledge base whose only text is being trained into QA pairs by the paused
    model: the answer says the knowledge base is still indexing. The training cannot finish before the
    model resumes, and the model resumes only once the notice (streamed by the search, before the model is
    asked) is on the page; then it writes the answer (and the QA pairs)."""
    kb = data(visit.client.post("/api/core/dataset/create", json={"name": "Returns policy"}))
    config = {"model": "scripted-chat", "datasets": [{"datasetId": kb}]}
    body = {"name": "Returns desk", "type": "simple", "simpleConfig": config}
    app_id = data(visit.client.post("/api/core/app/create", json=body))
    data(visit.client.post("/api/core/app/version/publish", json={"appId": app_id}))
    visit.pause_model(True)
    try:
        text = {"datasetId": kb, "name": "returns", "text": RETURNS, "trainingType": "qa"}
        data(visit.client.post("/api/core/dataset/collection/create/text", json=text))
        page.goto(f"{visit.base}/chat/{app_id}")
        page.fill("textarea[name=message]", QUESTION)
        page.keyboard.press("Enter")
        page.wait_for_selector("[data-testid=indexing-notice]:has-text('Returns policy')")
    finally:
        visit.pause_model(False)
    page.wait_for_selector(".msg.ai[data-done='1'] .answer")


def _members(page: Any, visit: Visit) -> None:
    page.goto(f"{visit.base}/members")
    page.select_option("select[name=inviteRole]", "member")
    page.click("button:has-text('Create invitation link')")
    page.wait_for_selector("[data-testid=invite-link] code")


def _invite(page: Any, visit: Visit) -> None:
    invitation = data(
        visit.client.post("/api/support/user/team/invitation/create", json={"role": "member", "hours": 72})
    )
    page.context.clear_cookies()  # the person invited is not signed in
    page.goto(visit.base + invitation["link"])
    page.wait_for_selector("[data-testid=invite]:has-text('as member')")
    page.fill("input[name=username]", "mia")
    page.fill("input[name=password]", "mia's own password")


def _keys(page: Any, visit: Visit) -> None:
    page.goto(f"{visit.base}/keys")
    page.wait_for_selector("td:has-text('Helpdesk')")


def _apps(page: Any, visit: Visit) -> None:
    page.goto(f"{visit.base}/apps")
    page.wait_for_selector(".tile:has-text('Helpdesk')")


def _fallback(page: Any, visit: Visit) -> None:
    _editor(page, visit)
    _inspect(page, "chatNode")
    page.wait_for_selector("[data-testid=inspector] [data-testid=model-fallback]")


def _imported(page: Any, visit: Visit) -> None:
    _fallback(page, visit)
    page.click("[data-testid=advanced-toggle]")


def _survey(visit: Visit) -> str:
    """The console tests' workflow that asks "Which colour?" on a user-select node, published."""
    if "survey" not in visit.notes:
        app_id = data(visit.client.post("/api/core/app/create", json=USER_SELECT_APP))
        data(visit.client.post("/api/core/app/version/publish", json={"appId": app_id}))
        visit.notes["survey"] = app_id
    return visit.notes["survey"]


def _user_select(page: Any, visit: Visit) -> None:
    page.goto(f"{visit.base}/chat/{_survey(visit)}")
    page.fill("textarea[name=message]", "start")
    page.keyboard.press("Enter")
    page.wait_for_selector("[data-testid=interactive] button:has-text('Red')")


def _tools_form(page: Any, visit: Visit) -> None:
    """The README's model cannot call a tool: the answer's stream is FastGPT's events for a tool call and
    a form, served by the browser's request router (as test_console_chat.py does)."""

    def fulfil(route: Any) -> None:
        headers = {"Content-Type": "text/event-stream"}
        route.fulfill(status=200, headers=headers, body=TOOL_CALL_ASKING_A_FORM)

    page.route("**/api/v2/chat/completions", fulfil)
    page.goto(f"{visit.base}/chat/{_survey(visit)}")
    page.fill("textarea[name=message]", "weather?")
    page.keyboard.press("Enter")
    page.wait_for_selector("form[data-testid=interactive] input")
    answer = page.locator(".msg.ai").last
    answer.locator("details.reasoning summary").click()
    answer.locator("[data-testid=tool-card] summary").click()


def _publish_refused(page: Any, visit: Visit) -> None:
    """A draft whose AI chat node is unconnected and has no question: Publish is refused with the list."""
    body = {"name": "Checked", "type": "advanced", "nodes": [START], "edges": [], "chatConfig": {}}
    app_id = data(visit.client.post("/api/core/app/create", json=body))
    broken = {"appId": app_id, "nodes": [START, LONE_CHAT], "edges": [], "chatConfig": {}}
    data(visit.client.post("/api/core/app/update", json=broken))  # a draft may keep its problems
    page.goto(f"{visit.base}/apps/{app_id}/workflow")
    page.wait_for_selector(".react-flow__node[data-id='aiChat']")
    page.click(".wf-bar button:has-text('Publish')")
    page.wait_for_selector("[data-testid=editor-error]:has-text('Not published: fix the problems below')")
    page.wait_for_selector(".react-flow__node[data-id='aiChat'] .wf-node.invalid")


def _built_by_touch(page: Any, visit: Visit) -> None:
    """start → knowledge search on the README's Handbook → AI chat, built by touch (its checks included)."""
    app_id = data(visit.client.post("/api/core/app/create", json=touch_flow_app("Phone flow")))
    build_by_touch(page, f"{visit.base}/apps/{app_id}/workflow", "Handbook", "scripted-chat")


def _sheet(page: Any, visit: Visit) -> None:
    _built_by_touch(page, visit)
    quote_search_results_in_the_sheet(page)


@dataclass(frozen=True)
class Shot:
    size: str
    lang: str
    scene: Scene
    full_page: bool = False
    late: bool = False  # taken after the others: the demo's knowledge base is still being indexed
    touch: bool = False  # a touch screen (a phone's browser)

    @property
    def group(self) -> tuple[bool, str, str, bool]:
        """The pictures taken in one browser context."""
        return self.late, self.size, self.lang, self.touch


SCENES: dict[str, Shot] = {
    "02-knowledge-files.png": Shot("desktop", "en", _handbook),
    "02b-knowledge-error-retry.png": Shot("desktop", "en", _import_error),
    "03-search-test.png": Shot("desktop", "en", lambda p, v: _search(p, v, "Search test"), full_page=True),
    "05-chat.png": Shot("desktop", "en", lambda p, v: _chat(p, v, v.app_id, QUESTION)),
    "07-user-select.png": Shot("desktop", "en", _user_select),
    "09-workflow-run.png": Shot("desktop", "en", lambda p, v: _workflow_run(p, v, "en", details=False)),
    "11-keys-usage.png": Shot("desktop", "en", _keys, full_page=True),
    "12-chat-tools-form.png": Shot("desktop", "en", _tools_form),
    "31-workflow-publish-refused.png": Shot("desktop", "en", _publish_refused),
    "accounts-desktop-members.png": Shot("desktop", "en", _members),
    "desktop-demo-answer.png": Shot(
        "desktop", "en", lambda p, v: _chat(p, v, v.demo_app_id, "How do I change the port?"), late=True
    ),
    "tour-desktop-chunk-preview.png": Shot("desktop", "en", lambda p, v: _chunk_preview(p, v, EN_PREVIEW)),
    "tour-desktop-workflow-run.png": Shot("desktop", "en", lambda p, v: _workflow_run(p, v, "en")),
    "desktop-zh-knowledge.png": Shot("desktop", "zh", _handbook),
    "desktop-zh-apps.png": Shot("desktop", "zh", _apps),
    "desktop-zh-editor.png": Shot("desktop", "zh", _fallback),
    "tour-desktop-zh-workflow-run.png": Shot("desktop", "zh", lambda p, v: _workflow_run(p, v, "zh")),
    "phone-02-knowledge.png": Shot("phone", "en", _handbook),
    "phone-keys.png": Shot("phone", "en", _keys),
    "desktop-chat-model-down.png": Shot("desktop", "en", _model_down, late=True),  # after every answer
    "phone-demo-answer.png": Shot(
        "phone", "en", lambda p, v: _chat(p, v, v.demo_app_id, "How do I change the port?"), late=True
    ),
    "phone-editor-imported.png": Shot("phone", "en", _imported),
    "phone-editor-built-by-touch.png": Shot("phone", "en", _built_by_touch, touch=True),
    "phone-editor-sheet.png": Shot("phone", "en", _sheet, touch=True),
    "tour-phone-chunk-preview.png": Shot("phone", "en", lambda p, v: _chunk_preview(p, v, EN_PREVIEW)),
    "tour-phone-simple-app-chat.png": Shot("phone", "en", lambda p, v: _chat(p, v, v.app_id, QUESTION)),
    "tour-phone-template-model-fallback.png": Shot("phone", "en", _fallback),
    "accounts-phone-invite.png": Shot("phone", "en", _invite),
    "phone-zh-search.png": Shot("phone", "zh", lambda p, v: _search(p, v, "搜索测试")),
    "tour-phone-zh-chunk-preview.png": Shot("phone", "zh", lambda p, v: _chunk_preview(p, v, ZH_PREVIEW)),
    "phone-indexing-notice.png": Shot("phone", "zh", _indexing_notice),  # after the Handbook's pictures
}

SHOT_BY_CONSOLE_TESTS: dict[str, str] = {}  # picture → the browser test taking it (none at present)


def sign_in_with_password(page: Any, base: str, password: str) -> None:
    page.goto(base + "/")
    page.fill("input[name=username]", "root")
    page.fill("input[name=password]", password)
    page.click(".login-card button.primary")
    page.wait_for_selector("nav.sidebar")


def _distinct_colours(page: Any, png: bytes) -> int:
    """How many colours the picture has (a blank page has one), counted by the browser's own decoder."""
    url = "data:image/png;base64," + base64.b64encode(png).decode()
    return int(
        page.evaluate(
            """async (url) => { const img = new Image(); img.src = url; await img.decode();
                const c = document.createElement('canvas'); c.width = img.width; c.height = img.height;
                const g = c.getContext('2d'); g.drawImage(img, 0, 0);
                const px = g.getImageData(0, 0, c.width, c.height).data; const seen = new Set();
                for (let i = 0; i < px.length && seen.size < 64; i += 4)
                    seen.add((px[i] << 16) | (px[i + 1] << 8) | px[i + 2]);
                return seen.size; }""",
            url,
        )
    )


def take(visit: Visit, names: list[str], into: Path) -> dict[str, int]:
    """Takes the named pictures into ``into`` (each scene on a fresh page of a browser signed in as root
    for its size, language and touch screen); answers each picture's count of distinct colours (up to 64)."""
    from playwright.sync_api import sync_playwright

    taken: dict[str, int] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS)
        try:
            groups = [
                (late, size, lang, touch)
                for late in (False, True)
                for size in VIEWPORTS
                for lang in LOCALES
                for touch in (False, True)
            ]
            for group in groups:
                mine = [name for name in names if SCENES[name].group == group]
                if not mine:
                    continue
                _, size, lang, touch = group
                context = browser.new_context(
                    viewport=VIEWPORTS[size], locale=LOCALES[lang], has_touch=touch, is_mobile=touch
                )
                context.set_default_timeout(120_000)  # a search embeds while the demo is being indexed
                try:
                    for number, name in enumerate(mine):
                        page = context.new_page()
                        page.on("dialog", lambda dialog: dialog.accept())
                        if number == 0:
                            sign_in_with_password(page, visit.base, visit.password)
                        SCENES[name].scene(page, visit)
                        page.wait_for_timeout(300)  # transitions settle
                        png = page.screenshot(path=str(into / name), full_page=SCENES[name].full_page)
                        page.goto("about:blank")
                        taken[name] = _distinct_colours(page, png)
                        page.close()
                finally:
                    context.close()
        finally:
            browser.close()
    return taken


__all__ = ["SCENES", "SHOT_BY_CONSOLE_TESTS", "Visit", "browser_unavailable", "take"]
