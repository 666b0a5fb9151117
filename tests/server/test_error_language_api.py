"""Error messages in the caller's language (issue 31 item 9): English by default, FastGPT's Chinese when
``Accept-Language`` prefers Chinese; ``code``, ``statusText`` and the HTTP status are the same in both.
A wrong password on sign-in is FastGPT's ``account_psw_error`` (503002), not ``unAuthorization``."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from live_support import LiveServer

from fathom.server.errors import FASTGPT_ERRORS, LABELS, language_of

ZH = {"Accept-Language": "zh-CN,zh;q=0.9,en;q=0.8"}
EN_FIRST = {"Accept-Language": "en-GB,en;q=0.9,zh-CN;q=0.8"}
FAKE_APP = "f" * 24
LOGIN = "/api/support/user/account/loginByPassword"


@pytest.mark.parametrize(
    ("header", "language"),
    [
        (None, "en"),
        ("", "en"),
        ("*", "en"),
        ("de-DE,de;q=0.9", "en"),
        ("zh", "zh"),
        ("zh-TW", "zh"),
        ("zh-Hant-HK, en;q=0.5", "zh"),
        ("en-US,en;q=0.9,zh-CN;q=0.8", "en"),
        ("zh-CN;q=0.4, en;q=0.6", "en"),
        ("fr, zh-CN;q=0.7, en;q=0.3", "zh"),
        ("en, zh", "en"),
        ("zh;q=0, en;q=0.1", "en"),
        ("zh;q=bogus", "en"),
    ],
)
def test_the_language_is_the_preferred_of_english_and_chinese(header: str | None, language: str) -> None:
    assert language_of(header) == language


def test_every_named_error_has_an_english_and_a_chinese_label() -> None:
    assert sorted(LABELS) == sorted(FASTGPT_ERRORS)
    for status_text, (_, fastgpt_text) in FASTGPT_ERRORS.items():
        english, chinese = LABELS[status_text]
        assert english.isascii() and not chinese.isascii(), status_text
        if not fastgpt_text.isascii():  # FastGPT's own text is the Chinese label, unchanged
            assert chinese == fastgpt_text, status_text


def _pair(server: LiveServer, method: str, path: str, **kwargs: Any) -> tuple[httpx.Response, httpx.Response]:
    headers = kwargs.pop("headers", {})
    with httpx.Client(base_url=server.base_url, timeout=30) as client:
        english = client.request(method, path, headers=headers, **kwargs)
        chinese = client.request(method, path, headers={**headers, **ZH}, **kwargs)
    return english, chinese


def _same_but_the_words(english: httpx.Response, chinese: httpx.Response) -> tuple[str, str]:
    assert english.status_code == chinese.status_code
    en, zh = english.json(), chinese.json()
    assert (en["code"], en["statusText"]) == (zh["code"], zh["statusText"])
    assert english.headers["content-language"] == "en" and chinese.headers["content-language"] == "zh"
    return en["message"], zh["message"]


def test_an_unknown_key_reads_in_english_unless_chinese_is_asked_for(module_live_server: LiveServer) -> None:
    unknown = {"Authorization": "Bearer fathom-doesnotexist"}
    english, chinese = _pair(module_live_server, "GET", "/api/v1/whoami", headers=unknown)
    assert english.status_code == 401 and english.json()["code"] == 514
    assert _same_but_the_words(english, chinese) == (
        "Invalid API key: the key is unknown or revoked.",
        "Api Key 不合法: the key is unknown or revoked.",
    )
    with httpx.Client(base_url=module_live_server.base_url, timeout=30) as client:
        english_first = client.get("/api/v1/whoami", headers={**unknown, **EN_FIRST})
    assert english_first.json()["message"].startswith("Invalid API key: ")


def test_a_missing_key_a_missing_app_and_an_unknown_route_in_both_languages(
    module_live_server: LiveServer,
) -> None:
    english, chinese = _pair(module_live_server, "GET", "/api/v1/whoami")
    assert english.json()["code"] == 403 and english.json()["statusText"] == "unAuthorization"
    en, zh = _same_but_the_words(english, chinese)
    assert en.startswith("Invalid credentials: Missing API key")
    assert zh.startswith("凭证错误: Missing API key")

    owner = {"Authorization": f"Bearer {module_live_server.admin_key}"}
    english, chinese = _pair(
        module_live_server, "GET", "/api/core/app/detail", params={"appId": FAKE_APP}, headers=owner
    )
    en, zh = _same_but_the_words(english, chinese)
    assert english.status_code == 404 and english.json()["statusText"] == "appUnExist"
    assert en.startswith("App not found") and zh.startswith("应用不存在")
    assert "应用" not in en

    english, chinese = _pair(module_live_server, "GET", "/api/no/such/route", headers=owner)
    assert _same_but_the_words(english, chinese) == ("Not Found", "未找到")


def test_a_refused_streaming_chat_frame_is_in_the_callers_language(module_live_server: LiveServer) -> None:
    body = {"stream": True, "appId": FAKE_APP, "messages": [{"role": "user", "content": "hi"}]}
    english, chinese = _pair(module_live_server, "POST", "/api/v1/chat/completions", json=body)
    assert english.status_code == chinese.status_code == 401

    def frame(response: httpx.Response) -> Any:
        data = next(line for line in response.text.splitlines() if line.startswith("data: "))
        return json.loads(data[len("data: ") :])

    en, zh = frame(english), frame(chinese)
    assert (en["code"], en["statusText"]) == (zh["code"], zh["statusText"]) == (403, "unAuthorization")
    assert en["message"].startswith("Invalid credentials: ") and zh["message"].startswith("凭证错误: ")


def test_a_wrong_password_is_fastgpts_account_psw_error(module_live_server: LiveServer) -> None:
    wrong = {"username": "root", "password": "not the password"}
    english, chinese = _pair(module_live_server, "POST", LOGIN, json=wrong)
    assert english.status_code == 401
    assert english.json()["code"] == 503002 and english.json()["statusText"] == "account_psw_error"
    assert _same_but_the_words(english, chinese) == ("Wrong username or password", "账号或密码错误")


def test_field_errors_name_the_field_in_either_language(module_live_server: LiveServer) -> None:
    owner = {"Authorization": f"Bearer {module_live_server.admin_key}"}
    english, chinese = _pair(
        module_live_server, "POST", "/api/support/openapi/create", json={"name": "k" * 101}, headers=owner
    )
    assert english.status_code == 400
    assert _same_but_the_words(english, chinese) == ("name: at most 100 characters, got 101",) * 2


def test_an_oversized_body_is_refused_in_the_callers_language(module_live_server: LiveServer) -> None:
    """The size limit answers before the app (and its language middleware) sees the request."""
    owner = {"Authorization": f"Bearer {module_live_server.admin_key}"}
    big = b'{"name": "' + b"x" * (128 * 1024) + b'"}'
    create = "/api/core/dataset/create"
    english, chinese = _pair(module_live_server, "POST", create, content=big, headers=owner)
    assert english.status_code == 413 and english.json()["code"] == 413
    en, zh = _same_but_the_words(english, chinese)
    assert en.startswith("Request body too large: request body exceeds 65536 bytes")
    assert zh.startswith("请求体过大: request body exceeds 65536 bytes")
