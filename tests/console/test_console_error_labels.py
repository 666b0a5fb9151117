"""The server's FastGPT error messages in the console's language: every entry of the server's error table
(``FASTGPT_ERRORS``) has an English and a Chinese label in ``web/src/errors.json``, which the console looks
up by the envelope's ``statusText``; a failed sign-in and a missing app read "Invalid API key: …" /
"App not found: …" in the English console and keep FastGPT's "Api Key 不合法: …" / "应用不存在: …" in
the Chinese one (a malformed key: "Invalid credentials: …" / "凭证错误: …")."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from fathom.server.errors import FASTGPT_ERRORS

LABELS = Path(__file__).parents[2] / "web" / "src" / "errors.json"
CJK = re.compile(r"[\u4e00-\u9fff]")
MISSING_APP = "0123456789abcdef01234567"


def test_every_server_error_has_an_english_and_a_chinese_label_in_the_console() -> None:
    labels = json.loads(LABELS.read_text(encoding="utf-8"))
    assert sorted(labels) == sorted(FASTGPT_ERRORS), "web/src/errors.json differs from FASTGPT_ERRORS"
    for status_text, (code, text) in FASTGPT_ERRORS.items():
        entry = labels[status_text]
        assert (entry["code"], entry["server"]) == (code, text), status_text
        assert entry["en"].strip() and not CJK.search(entry["en"]), (status_text, entry["en"])
        assert CJK.search(entry["zh"]), (status_text, entry["zh"])
        if CJK.search(text):  # FastGPT's own Chinese text is what the Chinese console shows
            assert entry["zh"] == text, status_text


def _error_text(page: Any) -> str:
    page.wait_for_selector(".error")
    return page.locator(".error").first.inner_text()


MALFORMED = "Malformed API key: expected '<prefix>-<secret>' or '<prefix>-<secret>-<appId>'."
SHOWN = {
    "en-US": ("Invalid API key: ", "Invalid credentials: ", "App not found: "),
    "zh-CN": ("Api Key 不合法: ", "凭证错误: ", "应用不存在: "),
}


@pytest.mark.parametrize(("locale", "sign_in_label"), [("en-US", "Sign in"), ("zh-CN", "登录")])
def test_server_errors_read_in_the_console_language(
    module_live_server: Any, browser: Any, locale: str, sign_in_label: str
) -> None:
    server = module_live_server
    unknown_key, malformed_key, missing_app = SHOWN[locale]
    # the English browser on a desktop, the Chinese one on a phone
    viewport = {"width": 1440, "height": 900} if locale == "en-US" else {"width": 390, "height": 844}
    page = browser.new_page(viewport=viewport, locale=locale)
    try:
        page.goto(server.base_url + "/")
        page.fill("input[name=apiKey]", "fathom-unknownsecret")
        page.click(f"button:has-text('{sign_in_label}')")
        assert _error_text(page) == unknown_key + "the key is unknown or revoked."
        page.fill("input[name=apiKey]", "fathom-not-a-key")
        page.click(f"button:has-text('{sign_in_label}')")
        page.wait_for_selector(f".error:has-text('{malformed_key}')")
        assert _error_text(page) == malformed_key + MALFORMED

        page.fill("input[name=apiKey]", server.admin_key)
        page.click(f"button:has-text('{sign_in_label}')")
        page.wait_for_selector("nav.sidebar")
        page.goto(f"{server.base_url}/apps/{MISSING_APP}")
        shown = _error_text(page)
        assert shown.startswith(missing_app) and MISSING_APP in shown, shown
        if locale == "en-US":
            assert not CJK.search(shown), shown
    finally:
        page.close()
