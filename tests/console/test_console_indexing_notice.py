"""Issue 31 item 6 in the console, at 1440×900 (English) and 390×844 (Chinese): an answer from a knowledge
base still indexing shows a notice above the answer (from the ``datasetIndexing`` event, and again after
a reload, from the stored node responses); once the knowledge base is indexed, a new answer shows none.

The server runs no in-process worker: the test runs the real ingestion worker once, in another thread.
(The picture ``docs/console.md`` shows is taken over the README walkthrough's server: ``tests/repo``.)"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from console_support import data
from live_support import free_port, start_live_server

from fathom.config import Settings
from fathom.platform import Platform
from fathom.testing import text_turn
from run_apart import run_apart

MODEL = "scripted-chat"
VIEWPORTS = {"desktop": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}
LOCALES = {"desktop": "en-US", "phone": "zh-CN"}  # the phone's browser reads Chinese
SIGN_IN = {"desktop": "Sign in", "phone": "登录"}
NOTICE = {
    "desktop": (
        "“Handbook” is still indexing: 1 of 1 documents are not searchable yet. "
        "This answer may miss passages."
    ),
    "phone": "“Handbook”仍在索引中：1 个文档中有 1 个尚不可检索。 此回答可能遗漏相关内容。",
}


@pytest.fixture
def idle_server(tmp_path: Path, scripted_model: Any) -> Iterator[Any]:
    """A live server with the scripted model and no ingestion worker (imports stay queued)."""
    scripted_model.set_script(lambda request: text_turn("Within five working days."))
    settings = Settings(
        data_dir=tmp_path / "data",
        port=free_port(),
        workers=0,
        openai_base_url=scripted_model.base_url,
        chat_model=MODEL,
    )
    yield from start_live_server(settings)


def _run_one_job(server: Any) -> int:
    async def main() -> int:
        platform = Platform.build(server.platform.settings)
        try:
            return await platform.new_worker(worker_id="test").run_until_idle(max_jobs=1)
        finally:
            await platform.db.close()

    return run_apart(main(), 120)


def _ask(page: Any, question: str) -> Any:
    page.fill("textarea[name=message]", question)
    page.keyboard.press("Enter")
    return page.wait_for_selector(".msg.ai[data-done='1'] .answer >> nth=-1", timeout=30_000)


def test_an_answer_from_a_knowledge_base_still_indexing_says_so(idle_server: Any, browser: Any) -> None:
    server = idle_server
    with server.client(server.admin_key) as client:
        kb = data(client.post("/api/core/dataset/create", json={"name": "Handbook"}))
        text = "Refunds are paid to the original card within five working days."
        data(
            client.post(
                "/api/core/dataset/collection/create/text", json={"datasetId": kb, "name": "r", "text": text}
            )
        )
        config = {
            "model": MODEL,
            "systemPrompt": "Answer from the handbook.",
            "datasets": [{"datasetId": kb}],
        }
        body = {"name": "Handbook desk", "type": "simple", "simpleConfig": config}
        app_id = data(client.post("/api/core/app/create", json=body))
    pages = {
        size: browser.new_page(viewport=viewport, locale=LOCALES[size])
        for size, viewport in VIEWPORTS.items()
    }
    try:
        for size, page in pages.items():
            page.goto(server.base_url + "/")
            page.fill("input[name=apiKey]", server.admin_key)
            page.click(f"button:has-text('{SIGN_IN[size]}')")
            page.wait_for_selector("nav.sidebar")
            page.goto(f"{server.base_url}/chat/{app_id}")
            _ask(page, "When do refunds arrive?")
            notice = page.wait_for_selector("[data-testid=indexing-notice]")
            assert notice.inner_text() == NOTICE[size]
            box, width = notice.bounding_box(), VIEWPORTS[size]["width"]
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width
            page.reload()  # the reopened chat shows it again, from the stored node responses
            page.wait_for_selector(".msg.ai .answer")
            assert page.locator("[data-testid=indexing-notice]").count() == 1

        assert _run_one_job(server) == 1
        page = pages["desktop"]
        page.click("button:has-text('New chat')")
        _ask(page, "When do refunds arrive?")
        page.wait_for_selector(".quote-chip")  # searched the indexed passage
        assert page.locator("[data-testid=indexing-notice]").count() == 0
    finally:
        for page in pages.values():
            page.close()
