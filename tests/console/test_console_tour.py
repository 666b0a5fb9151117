"""The daily-use tour of issue 18, at desktop (1440×900) and phone (390×844) size and in both languages
(an en-US and a zh-CN browser), against the scripted
model server: sign in; import a file after previewing its chunks; search test; a simple app with a model
picked from the model list and its knowledge base, answering with sources; a workflow built with undo and
the leave-without-saving prompt; a FastGPT template (as FastGPT exports it) imported, its unknown model
shown as falling back, a configured one picked, and run in the editor with each node's details; keys.

The tour's pictures in docs/console.md are taken over the README walkthrough's server
(tests/repo/readme_screenshots.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from console_support import browser_unavailable, launch_chromium, open_node, wait_for_inspector_field
from live_support import free_port, start_live_server

from fathom.config import Settings
from fathom.testing import ScriptedOpenAIServer
from fathom.testing.scripted_turns import text_turn

VIEWPORTS = {"desktop": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}
SHOTS = Path(__file__).parents[2] / "build" / "console-screenshots"
TEMPLATE = Path(__file__).parents[1] / "chat" / "fastgpt_apps" / "fg-simpleDatasetChat.json"
MODEL = "scripted-chat"
RERANK = "scripted-rerank"
GUIDE = (
    "# Travel guide\n\n## Visas\n\nTrips to Japan of up to ninety days need no visa for EU citizens.\n\n"
    "## Luggage\n\nEach traveller may check one bag of 23 kg on long-haul flights.\n\n"
    "## Trains\n\nThe rail pass covers every JR line except the Nozomi trains.\n"
)
ANSWER = "You may stay **ninety days** without a visa."


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    reason = browser_unavailable()
    if reason:
        print(f"SKIP console browser tests: {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with ScriptedOpenAIServer(
        rerank_fn=lambda query, document: 0.9 if "visa" in document else 0.1
    ) as scripted:
        scripted.set_script(lambda request: text_turn(ANSWER))
        root = tmp_path_factory.mktemp("tour")
        models = root / "models.yaml"
        models.write_text(
            f"default_chat: {MODEL}\nmodels:\n"
            f"  - {{id: {MODEL}, type: llm, base_url: '{scripted.base_url}', max_retries: 0}}\n"
            f"  - {{id: {RERANK}, type: rerank, base_url: '{scripted.base_url}', max_retries: 0}}\n",
            encoding="utf-8",
        )
        settings = Settings(data_dir=root / "data", port=free_port(), workers=1, models_file=models)
        servers = start_live_server(settings)
        server = next(servers)
        with sync_playwright() as pw:
            browser = launch_chromium(pw)
            try:
                yield {"server": server, "browser": browser, "root": root, "scripted": scripted}
            finally:
                browser.close()
                servers.close()


def _shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / name))


# what the tour clicks and reads, in each language of the console
TEXTS: dict[str, dict[str, str]] = {
    "en": {
        "create": "Create",
        "preview": "Preview chunks of {name}",
        "summary": "3 chunks of up to 100 characters",
        "import1": "Import 1 file",
        "search_tab": "Search test",
        "search": "Search",
        "create_app": "Create app",
        "default": "default",
        "publish": "Save & publish",
        "published": "Published",
        "chat": "Chat",
        "import": "Import",
        "fallback": "gpt-4o-mini is not configured here; runs on scripted-chat",
        "app": "App",
        "leave": "without saving",
        "run": "Run",
        "run_canvas": "Run the canvas",
        "ai_chat": "AI chat",
        "kb_search": "Knowledge base search",
        "user_question": "User question",
        "close": "Close",
        "save_draft": "Save draft",
        "saved": "Draft saved",
        "create_key": "Create key",
    },
    "zh": {
        "create": "创建",
        "preview": "预览 {name} 的分块",
        "summary": "3 个分块，每块最多 100 字符",
        "import1": "导入 1 个文件",
        "search_tab": "搜索测试",
        "search": "搜索",
        "create_app": "创建应用",
        "default": "默认",
        "publish": "保存并发布",
        "published": "已发布",
        "chat": "对话",
        "import": "导入",
        "fallback": "gpt-4o-mini 在本系统未配置，将使用 scripted-chat",
        "app": "应用",
        "leave": "不保存就离开",
        "run": "运行",
        "run_canvas": "运行画布",
        "ai_chat": "AI 对话",
        "kb_search": "知识库搜索",
        "user_question": "用户问题",
        "close": "关闭",
        "save_draft": "保存草稿",
        "saved": "草稿已保存",
        "create_key": "创建密钥",
    },
}
LOCALES = {"en": "en-US", "zh": "zh-CN"}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_daily_tour(env: dict[str, Any], size: str, lang: str) -> None:
    server, root, T = env["server"], env["root"], TEXTS[lang]
    page = env["browser"].new_page(viewport=VIEWPORTS[size], locale=LOCALES[lang])
    tag = size if lang == "en" else f"{size}-zh"
    dialogs: list[str] = []

    def on_dialog(dialog: Any) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss() if T["leave"] in dialog.message and len(dialogs) == 1 else dialog.accept()

    page.on("dialog", on_dialog)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(server.base_url + "/")
        page.fill("input[name=apiKey]", server.admin_key)
        page.click(".login-card button.primary")
        page.wait_for_selector("nav.sidebar")

        # a knowledge base, a file staged, its chunks previewed, then imported
        page.goto(f"{server.base_url}/knowledge")
        kb = f"Guide {tag}"
        page.fill("input[name=datasetName]", kb)
        page.click(f"button:has-text('{T['create']}')")
        page.wait_for_selector(f"h1:has-text('{kb}')")
        guide = root / f"guide-{tag}.md"
        guide.write_text(GUIDE, encoding="utf-8")
        page.set_input_files("[data-testid=file-input]", [str(guide)])
        page.check("input[name=chunkMode][value=custom]")
        page.fill("input[name=chunkSize]", "100")
        page.click(f"button:has-text('{T['preview'].format(name=guide.name)}')")
        summary = page.wait_for_selector("[data-testid=chunk-preview-summary]").inner_text()
        assert summary.startswith(T["summary"]), summary
        assert "ninety days" in page.locator("[data-testid=preview-chunk]").nth(0).inner_text()
        page.click(f"button:has-text('{T['import1']}')")
        page.wait_for_selector(f"tr[data-collection='{guide.name}'][data-status=ready]", timeout=60_000)
        assert page.locator(f"tr[data-collection='{guide.name}'] td >> nth=3").inner_text() == "3/3"

        # search test
        page.click(f".tabs >> text={T['search_tab']}")
        page.fill("textarea[name=query]", "How long can I stay in Japan without a visa?")
        page.click("form.search-form button.primary")
        assert "ninety days" in page.wait_for_selector("[data-testid=search-hit]").inner_text()

        # a simple app: the model picked from the list, the knowledge base as its source
        page.goto(f"{server.base_url}/apps")
        page.fill("input[name=appName]", f"Desk {tag}")
        page.click(f"button:has-text('{T['create_app']}')")
        page.wait_for_selector("select[name=model]")
        page.wait_for_selector("select[name=model]:not([disabled])")  # the model list has loaded
        options = page.locator("select[name=model] option").all_inner_texts()
        assert any(MODEL in o and T["default"] in o for o in options), options
        page.select_option("select[name=model]", MODEL)
        page.check(f"input[name='kb-{kb}']")
        page.check("input[name=usingReRank]")  # rerank with a model picked from the list
        page.wait_for_selector("select[name=rerankModel]:not([disabled])")
        page.select_option("select[name=rerankModel]", RERANK)
        reranked = len(env["scripted"].rerank_requests)
        page.click(f"button:has-text('{T['publish']}')")
        page.wait_for_selector(f"[data-testid=save-note]:has-text('{T['published']}')")
        page.click(f"main .page-head button:has-text('{T['chat']}')")
        page.fill("textarea[name=message]", "Do I need a visa for Japan?")
        page.keyboard.press("Enter")
        answer = page.wait_for_selector(".msg.ai[data-done='1']", timeout=30_000)
        assert "ninety days" in answer.inner_text()
        page.wait_for_selector(f".quote-chip:has-text('{guide.name}')")
        assert env["scripted"].chat_requests[-1]["model"] == MODEL
        assert [r["model"] for r in env["scripted"].rerank_requests[reranked:]] == [RERANK]

        # a FastGPT template as FastGPT exports it: its model is not configured here
        with server.client(server.admin_key) as client:
            start = {"nodeId": "workflowStartNodeId", "flowNodeType": "workflowStart", "name": "Start",
                     "position": {"x": 0, "y": 0}, "inputs": [], "outputs": []}  # fmt: skip
            body = {
                "name": f"Flow {tag}",
                "type": "advanced",
                "nodes": [start],
                "edges": [],
                "chatConfig": {},
            }
            app_id = client.post("/api/core/app/create", json=body).json()["data"]
        page.goto(f"{server.base_url}/apps/{app_id}/workflow")
        page.wait_for_selector(".react-flow__node [data-node-type=workflowStart]")
        page.click(f".wf-bar button:has-text('{T['import']}')")
        page.set_input_files(".wf-inspector input[type=file]", str(TEMPLATE))
        page.wait_for_selector(".react-flow__node [data-node-type=chatNode]")
        page.click("button[aria-label=Undo]")  # undo the import, redo it
        page.wait_for_selector(".react-flow__node [data-node-type=chatNode]", state="detached")
        page.click("button[aria-label=Redo]")
        # after a redo the view is where the user left it: on a phone the template's nodes can sit under
        # the wrapped toolbar, so the user fits the view first (React Flow's control)
        page.click(".react-flow__controls-fitview")
        open_node(page, ".react-flow__node [data-node-type=chatNode]")
        wait_for_inspector_field(page, "select[name=input-model]:not([disabled])")
        fallback = page.wait_for_selector("[data-testid=inspector] [data-testid=model-fallback]").inner_text()
        assert T["fallback"] in fallback, fallback
        # the template's "FlowNodeInputTypeEnum.reference" inputs are references, its hidden ones internal
        assert page.locator("[data-testid=inspector] [data-testid=ref-userChatInput]").count() == 1
        assert "Dataset search extension bg" not in page.locator(".wf-canvas").inner_text()
        page.select_option("[data-testid=inspector] select[name=input-model]", MODEL)
        assert page.locator("[data-testid=inspector] [data-testid=model-fallback]").count() == 0
        page.click("[data-testid=inspector] button[aria-label=Close]")
        page.click(".react-flow__node [data-node-type=datasetSearchNode] .wf-node-head")
        page.check(f"[data-testid=inspector] label:has-text('{kb}') input")
        page.click("[data-testid=inspector] button[aria-label=Close]")

        page.click(f".wf-bar a:has-text('{T['app']}')")  # unsaved: asks, dismissed, the editor stays
        assert dialogs and T["leave"] in dialogs[0]
        assert page.url.endswith("/workflow")

        # run the canvas: each node's duration, tokens and model; not in the app's chat history
        page.click(f".wf-bar button:has-text('{T['run']}')")
        page.fill("textarea[name=runQuery]", "Do I need a visa for Japan?")
        page.click(f"button:has-text('{T['run_canvas']}')")
        page.wait_for_selector("[data-testid=run-panel] .chunk:has-text('ninety days')", timeout=30_000)
        steps = page.locator("[data-testid=node-step]")
        chat_step = steps.filter(has_text=T["ai_chat"]).inner_text()
        assert "tokens" in chat_step and MODEL in chat_step, chat_step
        assert steps.filter(has_text=T["kb_search"]).count() == 1
        steps.filter(has_text=T["ai_chat"]).locator("summary").click()  # what the node read and produced
        inputs = steps.filter(has_text=T["ai_chat"]).locator("[data-testid=node-inputs]").inner_text()
        assert T["user_question"] in inputs and "Do I need a visa for Japan?" in inputs, inputs
        outputs = steps.filter(has_text=T["ai_chat"]).locator("[data-testid=node-outputs]").inner_text()
        assert "ninety days" in outputs, outputs
        page.click(f"[data-testid=run-panel] button:has-text('{T['close']}')")
        page.click(f".wf-bar button:has-text('{T['save_draft']}')")
        page.wait_for_selector(f"[data-testid=editor-note]:has-text('{T['saved']}')")
        with server.client(server.admin_key) as client:
            chats = client.post("/api/core/chat/getHistories", json={"appId": app_id}).json()["data"]
        assert chats["total"] == 0, chats

        # keys
        page.goto(f"{server.base_url}/keys")
        page.fill("input[name=keyName]", f"tour {tag}")
        page.click(f"button:has-text('{T['create_key']}')")
        page.wait_for_selector("text=fathom-")
        _shot(page, f"tour-{tag}-keys.png")
        assert not errors, errors
    finally:
        page.close()
