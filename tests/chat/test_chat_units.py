"""Pure parts of the chat services: message checks, history rules, simple-app compiling, frame
visibility, and the run channel that SSE readers follow and resume."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fathom.chat import (
    MESSAGES_EMPTY,
    MESSAGES_NOT_ARRAY,
    USER_QUESTION_EMPTY,
    ChatError,
    Frame,
    RunChannel,
    compile_simple_app,
    frame_visible,
    split_messages,
)
from fathom.chat.app_graph import AppGraph, PublishedGraph, _history_load_limit
from fathom.chat.messages import concat_histories
from fathom.workflow import load_workflow


@pytest.mark.parametrize(
    ("messages", "error"),
    [
        (None, MESSAGES_NOT_ARRAY),
        ("hi", MESSAGES_NOT_ARRAY),
        ([], MESSAGES_EMPTY),
        ([{"role": "system", "content": "s"}], USER_QUESTION_EMPTY),
        ([{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}], USER_QUESTION_EMPTY),
        ([{"role": "user", "content": [{"type": "text", "text": ""}]}], USER_QUESTION_EMPTY),
    ],
)
def test_split_messages_errors(messages: Any, error: str) -> None:
    with pytest.raises(ChatError) as caught:
        split_messages(messages)
    assert caught.value.message == error


def test_split_messages_keeps_parts_and_earlier_turns() -> None:
    earlier, query = split_messages(
        [
            {"role": "system", "content": "be nice"},
            {"role": "user", "content": "q1"},
            {"role": "assistant", "content": "a1"},
            {"role": "tool", "content": "ignored", "tool_call_id": "t"},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "see"},
                    {"type": "image_url", "image_url": {"url": "http://x/cat.png"}},
                    {"type": "file_url", "name": "a.pdf", "url": "http://x/a.pdf"},
                ],
            },
        ]
    )
    assert [item["obj"] for item in earlier] == ["System", "Human", "AI"]
    assert [v["type"] for v in query] == ["text", "file", "file"]
    assert query[1]["file"] == {"type": "image", "name": "", "url": "http://x/cat.png"}


def test_plugin_apps_need_no_messages() -> None:
    assert split_messages(None, plugin=True) == ([], [])
    assert split_messages([], plugin=True) == ([], [])


role = st.sampled_from(["system", "user", "assistant", "tool", "other"])
content = st.one_of(
    st.text(max_size=5),
    st.none(),
    st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=3)}), max_size=2),
)


@given(st.lists(st.fixed_dictionaries({"role": role, "content": content}), max_size=6))
def test_split_messages_either_gives_a_user_query_or_a_fastgpt_error(messages: list[dict[str, Any]]) -> None:
    try:
        _, query = split_messages(messages)
    except ChatError as exc:
        assert exc.message in (MESSAGES_EMPTY, USER_QUESTION_EMPTY)
        return
    assert any((v.get("text") or {}).get("content") for v in query)


def test_history_load_limit_is_twice_the_largest_history_setting_at_least_ten() -> None:
    node = {"inputs": [{"key": "history", "value": 30}]}
    assert _history_load_limit({"nodes": []}) == 20
    assert _history_load_limit({"nodes": [{"inputs": [{"key": "history", "value": 3}]}]}) == 20
    assert _history_load_limit({"nodes": [node]}) == 60
    assert _history_load_limit({"nodes": [{"inputs": [{"key": "historyMaxAmount", "value": 12}]}]}) == 24


def test_runs_of_a_published_version_share_its_loaded_graph_and_each_decodes_its_own_document() -> None:
    """A version's runs share the loaded graph; its settings and history length come without decoding
    the document, and a run that needs the document gets a copy no other run sees."""
    workflow = json.loads(
        (Path(__file__).resolve().parent / "fastgpt_apps" / "fg-simpleDatasetChat.json").read_text()
    )["workflow"]
    chat_config = {"variables": [{"key": "city", "defaultValue": "Lyon"}], "welcomeText": "Hi"}
    document = {"nodes": workflow["nodes"], "edges": workflow["edges"], "chatConfig": chat_config}
    published = PublishedGraph.of(document)
    assert published.loaded is not None and json.loads(published.frozen) == document
    app: Any = object()
    first, second = (AppGraph(app, None, "v1", published=published) for _ in range(2))
    assert first.loaded is second.loaded is published.loaded
    assert first.chat_config == document["chatConfig"]
    assert first.history_limit == _history_load_limit(document)
    assert first._workflow is None  # neither read the document
    first.workflow["nodes"].clear()
    first.chat_config["variables"] = ["changed"]
    assert second.workflow == document and second.chat_config == document["chatConfig"]
    assert AppGraph(app, document, None).history_limit == _history_load_limit(document)
    with pytest.raises(ValueError, match="a workflow or a published version"):
        AppGraph(app, None, None)


def test_concat_histories_skips_messages_already_stored() -> None:
    stored = [{"dataId": "a", "obj": "Human", "value": []}]
    sent = [{"dataId": "a", "obj": "Human", "value": []}, {"obj": "AI", "value": []}]
    assert concat_histories(stored, sent) == [*stored, sent[1]]


def test_compiled_simple_apps_load_as_workflows() -> None:
    plain = compile_simple_app({"model": "m", "systemPrompt": "p"})
    assert [n["flowNodeType"] for n in load_workflow(plain).to_dict()["nodes"]] == [
        "userGuide",
        "workflowStart",
        "chatNode",
    ]
    with_kb = compile_simple_app(
        {"model": "m", "datasets": [{"datasetId": "d1"}], "datasetSearchSetting": {"limit": 900}}
    )
    search = next(n for n in with_kb["nodes"] if n["flowNodeType"] == "datasetSearchNode")
    values = {i["key"]: i["value"] for i in search["inputs"]}
    assert values["limit"] == 900 and values["datasets"] == [{"datasetId": "d1"}]
    chat = next(n for n in with_kb["nodes"] if n["flowNodeType"] == "chatNode")
    assert {i["key"]: i["value"] for i in chat["inputs"]}["quoteQA"] == ["datasetSearchNode", "quoteQA"]
    load_workflow(with_kb)


@pytest.mark.parametrize(
    ("event", "detail", "version", "visible"),
    [
        ("answer", False, 1, True),
        ("fastAnswer", False, 2, True),
        ("error", False, 1, True),
        ("flowNodeStatus", False, 1, False),
        ("interactive", False, 1, False),
        ("flowNodeStatus", True, 1, True),
        ("flowResponses", True, 1, True),
        ("flowResponses", True, 2, False),
        ("flowNodeResponse", True, 1, False),
        ("flowNodeResponse", True, 2, True),
        ("interactive", True, 2, True),
    ],
)
def test_frame_visibility(event: str, detail: bool, version: int, visible: bool) -> None:
    assert frame_visible(Frame(1, event, {}), detail=detail, api_version=version) is visible


async def test_channel_readers_resume_after_any_frame_and_see_the_end() -> None:
    channel = RunChannel(("t", "a", "c"), "r")

    async def writer() -> None:
        for i in range(5):
            channel.push("answer", i)
            await asyncio.sleep(0)
        channel.close("done")

    async def read(after: int) -> list[int]:
        return [f.seq async for batch in channel.follow(after) if batch is not None for f in batch]

    task = asyncio.create_task(writer())
    full, tail = await asyncio.gather(read(0), read(3))
    await task
    assert full == [1, 2, 3, 4, 5] and tail == [4, 5]
    assert await read(5) == []
    assert await channel.wait_done() == "done"


async def test_channel_follow_yields_none_while_idle() -> None:
    channel = RunChannel(("t", "a", "c"), "r")
    seen: list[Any] = []

    async def read() -> None:
        async for batch in channel.follow(0, heartbeat=0.01):
            seen.extend(batch if batch is not None else [None])
            if batch is None and not channel.frames:
                channel.push("answer", "x")
                channel.close()

    await asyncio.wait_for(read(), 5)
    assert seen[0] is None and [f.seq for f in seen if f is not None] == [1]


def test_a_run_that_crashed_in_the_database_tells_the_client_no_driver_text() -> None:
    import sqlite3

    import psycopg
    from sqlalchemy.exc import IntegrityError

    from fathom.chat.chat_service import _run_error

    refused = psycopg.OperationalError('connection to server at "10.0.0.5", port 5432 failed: refused')
    duplicate = IntegrityError(
        "INSERT INTO chat_items …", {}, sqlite3.IntegrityError("UNIQUE constraint failed")
    )
    told = [_run_error(refused), _run_error(duplicate), _run_error(RuntimeError("the tool broke"))]
    assert told[0].startswith("Database unavailable: this answer was not saved")
    assert told[1].startswith("Database error: this answer was not saved")
    assert told[2] == "the tool broke"
    assert not any(word in " ".join(told) for word in ("10.0.0.5", "5432", "UNIQUE", "INSERT", "psycopg"))
