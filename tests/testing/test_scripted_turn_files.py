"""Script files for demos: turns from plain data, and the echo script."""

from __future__ import annotations

import json
from pathlib import Path

import openai

from fathom.testing import ScriptedOpenAIServer, Turn
from fathom.testing.__main__ import echo, load_script
from fathom.testing.scripted_turns import ScriptedToolCall, turn_from_dict


def test_turn_from_dict_accepts_strings_and_tool_call_mappings() -> None:
    assert turn_from_dict("hi") == Turn(content="hi")
    turn = turn_from_dict(
        {"content": "Looking", "tool_calls": [{"name": "search", "arguments": {"q": "x"}}], "usage": [5, 2]}
    )
    assert turn.tool_calls == (ScriptedToolCall("search", {"q": "x"}),)
    assert turn.usage == (5, 2)


def test_yaml_and_json_script_files_load(tmp_path: Path) -> None:
    yaml_file = tmp_path / "s.yaml"
    yaml_file.write_text("- first\n- content: second\n  reasoning: why\n- status: 429\n  error: slow\n")
    json_file = tmp_path / "s.json"
    json_file.write_text(json.dumps(["only"]))
    turns = load_script(yaml_file)
    assert [t.content for t in turns] == ["first", "second", ""]
    assert (turns[1].reasoning, turns[2].status, turns[2].error) == ("why", 429, "slow")
    assert load_script(json_file) == [Turn(content="only")]


def test_echo_script_repeats_the_last_user_message() -> None:
    with ScriptedOpenAIServer(echo) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        messages = [
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": [{"type": "text", "text": "second"}]},
        ]
        reply = client.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
    assert reply.choices[0].message.content == "You said: second"
