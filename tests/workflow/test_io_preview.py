"""The run panel's view of a node's inputs and outputs: bounded, JSON-safe, credentials redacted."""

from __future__ import annotations

import json

from fathom.workflow.io_preview import MAX_ITEMS, MAX_TEXT, REDACTED, io_preview


def test_credential_like_names_are_redacted_at_any_depth() -> None:
    view = io_preview(
        {"apiKey": "sk-1", "headers": {"a": "b"}, "nested": {"Authorization": "Bearer x"}, "q": "ok"}
    )
    assert view == {"apiKey": REDACTED, "headers": REDACTED, "nested": {"Authorization": REDACTED}, "q": "ok"}


def test_limits_named_like_tokens_are_not_secrets() -> None:
    view = io_preview(
        {"maxToken": 1950, "max_tokens": 10, "token": "t", "accessToken": "a", "quoteTemplate": "q"}
    )
    assert view == {
        "maxToken": 1950,
        "max_tokens": 10,
        "token": REDACTED,
        "accessToken": REDACTED,
        "quoteTemplate": "q",
    }


def test_long_text_and_long_lists_are_cut_and_say_so() -> None:
    view = io_preview({"text": "x" * (MAX_TEXT + 5), "items": list(range(MAX_ITEMS + 3))})
    assert view["text"].startswith("x" * MAX_TEXT) and view["text"].endswith(f"({MAX_TEXT + 5} characters)")
    assert view["items"][:MAX_ITEMS] == list(range(MAX_ITEMS)) and view["items"][-1] == "… 3 more"


def test_any_value_becomes_json() -> None:
    deep = {"a": {"b": {"c": {"d": {"e": 1}}}}}
    view = io_preview({"deep": deep, "obj": object(), "t": (1, 2), "n": None})
    json.dumps(view)
    assert view["deep"]["a"]["b"]["c"] == "<dict>" and view["t"] == [1, 2] and view["n"] is None
