"""Property: a checkpoint never separates a tool call from its result. Over random transcripts (user and
assistant text, assistant tool calls followed by their replies, leading system messages) with
checkpoints placed at any position, what ``restore_from_newest_checkpoint`` keeps has every tool reply
after its call and every call answered; it starts with the system messages and the newest checkpoint and
keeps everything after it in order. The same holds for the Agent node's history rebuild from chat items."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from fathom.agent import restore_from_newest_checkpoint
from fathom.agent.compress.checkpoint import _is_checkpoint_message
from fathom.workflow.nodes.agent_context import checkpoint_value, history_messages

Message = dict[str, Any]


@st.composite
def blocks(draw: st.DrawFn, index: int) -> list[Message]:
    kind = draw(st.sampled_from(["user", "assistant", "tools"]))
    if kind == "user":
        return [{"role": "user", "content": f"question {index}"}]
    if kind == "assistant":
        return [{"role": "assistant", "content": f"answer {index}"}]
    count = draw(st.integers(min_value=1, max_value=3))
    ids = [f"call_{index}_{n}" for n in range(count)]
    calls = [{"id": i, "type": "function", "function": {"name": "t", "arguments": "{}"}} for i in ids]
    return [{"role": "assistant", "content": "", "tool_calls": calls}] + [
        {"role": "tool", "tool_call_id": i, "content": f"result {i}"} for i in ids
    ]


@st.composite
def transcripts(draw: st.DrawFn) -> tuple[list[Message], int]:
    count = draw(st.integers(min_value=0, max_value=8))
    body: list[Message] = [m for i in range(count) for m in draw(blocks(i))]
    checkpoints = draw(st.integers(min_value=0, max_value=3))
    for n in range(checkpoints):
        at = draw(st.integers(min_value=0, max_value=len(body)))
        hidden = {
            "role": "user",
            "content": f"<context_checkpoint>\n{n}\n</context_checkpoint>",
            "hideInUI": True,
        }
        body.insert(at, hidden)
    system = [{"role": "system", "content": "rules"}] if draw(st.booleans()) else []
    return system + body, checkpoints


def assert_paired(messages: list[Message]) -> None:
    open_calls: set[str] = set()
    for message in messages:
        if message["role"] == "tool":
            assert message["tool_call_id"] in open_calls, messages
            open_calls.discard(message["tool_call_id"])
        else:
            assert not open_calls or message["role"] == "tool", messages  # replies follow their call
            open_calls = {c["id"] for c in message.get("tool_calls") or []}
    assert not open_calls, messages


def balanced(messages: list[Message]) -> list[Message]:
    """The transcript without the checkpoint messages (what the loop itself produced)."""
    return [m for m in messages if not _is_checkpoint_message(m)]


@settings(max_examples=300, deadline=None)
@given(transcripts())
def test_restoring_from_the_newest_checkpoint_never_separates_a_call_from_its_result(
    case: tuple[list[Message], int],
) -> None:
    messages, checkpoints = case
    assert_paired(balanced(messages))  # the generator's own transcripts are well formed
    restored = restore_from_newest_checkpoint(messages)
    assert_paired(balanced(restored))
    if not checkpoints:
        assert restored == messages
        return
    newest = max(i for i, m in enumerate(messages) if _is_checkpoint_message(m))
    lead = [m for m in messages[:newest] if m["role"] == "system"]
    assert restored[: len(lead)] == lead
    assert restored[len(lead)] is messages[newest]
    kept = restored[len(lead) + 1 :]
    after = messages[newest + 1 :]
    assert kept == after[len(after) - len(kept) :]  # only leading orphan replies are dropped
    assert all(m["role"] == "tool" for m in after[: len(after) - len(kept)])


@st.composite
def chat_items(draw: st.DrawFn) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for turn in range(draw(st.integers(min_value=1, max_value=5))):
        items.append({"obj": "Human", "value": [{"type": "text", "text": {"content": f"q{turn}"}}]})
        values: list[dict[str, Any]] = [
            {"type": "tool", "tools": [{"id": f"c{turn}", "response": "r"}]},
            {"type": "text", "text": {"content": f"a{turn}"}},
        ]
        for n in range(draw(st.integers(min_value=0, max_value=2))):
            values.insert(
                draw(st.integers(min_value=0, max_value=len(values))), checkpoint_value(f"cp{turn}.{n}")
            )
        items.append({"obj": "AI", "value": values})
    return items


@settings(max_examples=200, deadline=None)
@given(chat_items())
def test_the_history_rebuild_starts_at_the_newest_stored_checkpoint(items: list[dict[str, Any]]) -> None:
    messages = history_messages(items)
    assert_paired(balanced(messages))
    stored = [
        (t, v)
        for t, item in enumerate(items)
        for v in item["value"]
        if isinstance(v, dict) and "contextCheckpoint" in v
    ]
    if not stored:
        assert not any(_is_checkpoint_message(m) for m in messages)
        return
    newest_item, newest = stored[-1]
    assert messages[0] == {
        "role": "user",
        "content": newest["contextCheckpoint"],
        "hideInUI": True,
        "contextCheckpoint": True,
    }
    assert sum(_is_checkpoint_message(m) for m in messages) == 1
    values = items[newest_item]["value"]
    shown = [v["text"]["content"] for v in values[values.index(newest) + 1 :] if v.get("type") == "text"]
    if shown:
        assert messages[1] == {"role": "assistant", "content": "\n".join(shown)}
    texts = [m["content"] for m in messages[1:]]
    assert not any(f"q{turn}" in texts for turn in range(newest_item // 2 + 1))
