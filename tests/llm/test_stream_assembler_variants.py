"""Chunk shapes seen from different OpenAI-compatible servers assemble into the same events."""

from __future__ import annotations

from typing import Any

import pytest

from fathom.llm import ToolCallStart, ToolParamsDelta, Usage
from fathom.llm.events import FinishEvent
from fathom.llm.stream_assembler import StreamAssembler


def chunk(
    delta: dict[str, Any], finish: str | None = None, usage: dict[str, int] | None = None
) -> dict[str, Any]:
    return {
        "id": "c1",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        "usage": usage,
    }


def call(
    index: int | None, id_: str | None = None, name: str | None = None, args: str | None = None
) -> dict[str, Any]:
    function: dict[str, Any] = {}
    if name is not None:
        function["name"] = name
    if args is not None:
        function["arguments"] = args
    item: dict[str, Any] = {"function": function}
    if index is not None:
        item["index"] = index
    if id_ is not None:
        item["id"] = id_
    return {"tool_calls": [item]}


VARIANTS = {
    "openai: head then fragments": [
        chunk(call(0, "a", "f", "")),
        chunk(call(0, args='{"x"')),
        chunk(call(0, args=": 1}")),
        chunk({}, "tool_calls"),
    ],
    "whole call in one chunk": [chunk(call(0, "a", "f", '{"x": 1}')), chunk({}, "tool_calls")],
    "no index (some Ollama/vLLM builds)": [
        chunk(call(None, "a", "f")),
        chunk(call(None, args='{"x": ')),
        chunk(call(None, args="1}")),
        chunk({}, "stop"),
    ],
    "arguments before the name": [
        chunk(call(0, "a", args='{"x": ')),
        chunk(call(0, name="f", args="1}")),
        chunk({}, "tool_calls"),
    ],
}


def run(chunks: list[dict[str, Any]]) -> list[Any]:
    assembler = StreamAssembler()
    events: list[Any] = []
    for item in chunks:
        events += assembler.feed(item)
    events += assembler.finish(request_id=None, model="m", count_usage=lambda result: Usage(1, 1, True))
    return events


@pytest.mark.parametrize("chunks", list(VARIANTS.values()), ids=list(VARIANTS))
def test_variants_give_one_call_with_complete_arguments(chunks: list[dict[str, Any]]) -> None:
    events = run(chunks)
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert [(s.call_id, s.name) for s in starts] == [("a", "f")]
    args = "".join(e.args_delta for e in events if isinstance(e, ToolParamsDelta))
    assert args == '{"x": 1}'
    assert events.index(starts[0]) < min(i for i, e in enumerate(events) if isinstance(e, ToolParamsDelta))
    finish = events[-1]
    assert isinstance(finish, FinishEvent)
    assert finish.result.tool_calls[0].parsed_arguments() == {"x": 1}
    assert finish.request_id == "c1"


def test_two_calls_without_index_are_split_by_their_ids() -> None:
    events = run(
        [chunk(call(None, "a", "f", "{}")), chunk(call(None, "b", "g", "{}")), chunk({}, "tool_calls")]
    )
    finish = events[-1]
    assert [(c.id, c.name) for c in finish.result.tool_calls] == [("a", "f"), ("b", "g")]


def test_missing_call_id_gets_a_generated_one() -> None:
    events = run([chunk(call(0, None, "f", "{}")), chunk({}, "tool_calls")])
    start = next(e for e in events if isinstance(e, ToolCallStart))
    assert start.call_id.startswith("call_") and len(start.call_id) > 10


def test_usage_inside_the_last_choice_chunk_is_used() -> None:
    events = run([chunk({"content": "hi"}, "stop", usage={"prompt_tokens": 9, "completion_tokens": 2})])
    assert events[-1].result.usage == Usage(9, 2, False)


def test_reasoning_field_alias_is_accepted() -> None:
    events = run([chunk({"reasoning": "hmm"}), chunk({"content": "ok"}, "stop")])
    assert events[-1].result.reasoning == "hmm"
    assert events[-1].result.usage.estimated is True


def test_no_finish_reason_defaults_to_stop() -> None:
    assert run([chunk({"content": "x"})])[-1].finish_reason == "stop"
