"""Prompt-mode tool-call text: streamed answer never leaks call blocks, however the text is split."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from fathom.agent.fast_agent import ToolTextFilter, parse_tool_blocks, to_prompt_messages

BLOCK = '<tool_call>{"name": "add", "arguments": {"a": 1}}</tool_call>'


@given(
    st.text(alphabet="ab <>/_", max_size=30),
    st.text(alphabet="cd <>", max_size=30),
    st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=40),
)
def test_any_split_gives_the_same_text_and_calls(before: str, after: str, cuts: list[int]) -> None:
    text = before + BLOCK + after
    pieces, pos = [], 0
    for cut in cuts:
        pieces.append(text[pos : pos + cut])
        pos += cut
    pieces.append(text[pos:])
    parser = ToolTextFilter()
    shown = "".join(parser.feed(piece) for piece in pieces) + parser.finish()
    whole = ToolTextFilter()
    expected = whole.feed(text) + whole.finish()
    assert shown == expected == parser.text
    assert parser.blocks == whole.blocks
    assert "<tool_call>" not in shown or "<tool_call>" in before + after


def test_blocks_parse_into_calls_and_bad_json_gives_a_nameless_call() -> None:
    calls = parse_tool_blocks(
        ['{"name": "add", "arguments": {"a": 1}}', "not json", '{"toolId": "t", "args": "x"}']
    )
    assert [c["function"]["name"] for c in calls] == ["add", "", "t"]
    assert json.loads(calls[0]["function"]["arguments"]) == {"a": 1}
    assert calls[2]["function"]["arguments"] == "x"
    assert len({c["id"] for c in calls}) == 3


def test_unterminated_block_still_counts() -> None:
    parser = ToolTextFilter()
    assert parser.feed('hi <tool_call>{"name": "x"}') == "hi "
    assert parser.finish() == "" and parser.blocks == ['{"name": "x"}']


def test_transcript_renders_calls_and_results_as_text() -> None:
    schemas = [{"type": "function", "function": {"name": "add", "description": "Add", "parameters": {}}}]
    call = {"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a": 1}'}}
    rendered = to_prompt_messages(
        [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "2"},
        ],
        schemas,
    )
    assert rendered[0]["role"] == "system" and '"name": "add"' in rendered[0]["content"]
    assert rendered[2] == {
        "role": "assistant",
        "content": '<tool_call>{"name": "add", "arguments": {"a": 1}}</tool_call>',
    }
    assert rendered[3] == {
        "role": "user",
        "content": '<tool_response name="add" id="c1">\n2\n</tool_response>',
    }
