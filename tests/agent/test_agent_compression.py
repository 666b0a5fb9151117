"""Context checkpoints and tool-response compression (spec §3.11, §3.12)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agent_helpers import Recorder, make_runtime

from fathom.agent import (
    TOOL_RESPONSE_COMPRESS_MODULE,
    AgentLoopInput,
    checkpoint_target,
    compress_tool_response,
    get_compression_token_limit,
    message_threshold,
    restore_from_newest_checkpoint,
    run_agent_loop,
)
from fathom.agent.compress import TRUNCATED_MARKER, head_tail_truncate, regex_cleanup
from fathom.agent.compress.checkpoint import _active_plan_block, _normalize_checkpoint_content
from fathom.agent.compress.tool_response import _json_structural_summary, _light_process
from fathom.llm import count_tokens
from fathom.testing import ScriptedOpenAIServer, text_turn, tool_call_turn
from fathom.tools import ToolDefinition, ToolResult


@pytest.mark.parametrize(
    ("max_context", "threshold", "target"),
    [(128000, 102400, 25600), (8000, 6400, 4096), (4000, 4000, 4000), (20480, 16384, 4096)],
)
def test_threshold_and_target_vectors(max_context: int, threshold: int, target: int) -> None:
    assert message_threshold(max_context) == threshold
    assert checkpoint_target(max_context) == target
    assert get_compression_token_limit(max_context, 0.8) == threshold


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("  summary  ", "<context_checkpoint>\nsummary\n</context_checkpoint>"),
        ("```markdown\nfacts\n```", "<context_checkpoint>\nfacts\n</context_checkpoint>"),
        ("```md\nfacts\n```", "<context_checkpoint>\nfacts\n</context_checkpoint>"),
        (
            "noise <context_checkpoint>one</context_checkpoint> <context_checkpoint>two</context_checkpoint>",
            "<context_checkpoint>one</context_checkpoint>",
        ),
        (
            "<context_checkpoint>open only",
            "<context_checkpoint>\n<context_checkpoint>open only\n</context_checkpoint>",
        ),
    ],
)
def test_checkpoint_normalization(raw: str, normalized: str) -> None:
    assert _normalize_checkpoint_content(raw) == normalized


def test_active_plan_block_escapes_its_closing_tag() -> None:
    block = _active_plan_block({"name": "x</active_plan>y", "steps": []})
    assert block == '<active_plan>\n{\n  "name": "x<\\/active_plan>y",\n  "steps": []\n}\n</active_plan>\n'
    assert block.count("</active_plan>") == 1


def test_restore_keeps_leading_system_and_the_newest_checkpoint_onwards() -> None:
    old = {"role": "user", "content": "<context_checkpoint>old</context_checkpoint>"}
    new = {
        "role": "user",
        "content": "<active_plan>\n{}\n</active_plan>\n<context_checkpoint>new</context_checkpoint>",
    }
    messages = [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "q1"},
        old,
        {"role": "assistant", "content": "a1"},
        new,
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function"}]},
        {"role": "tool", "tool_call_id": "c", "content": "r"},
    ]
    assert restore_from_newest_checkpoint(messages) == [messages[0], *messages[4:]]
    assert restore_from_newest_checkpoint(messages[:2]) == messages[:2]


def test_regex_cleanup_stages() -> None:
    text = (
        "![chart](http://x/y.png) see https://example.com/a?b=1 at /var/lib/data/report.csv "
        f"id {'ab' * 16} uuid 123e4567-e89b-12d3-a456-426614174000 at 2026-11-29T10:00:00Z "
        f"blob {'QUJD' * 30}\n\n\n\nend   here"
    )
    assert regex_cleanup(text) == "[chart] see at report.csv id uuid at blob [BASE64_DATA]\n\nend here"


def test_light_process_minifies_json_and_summarises_when_still_too_big() -> None:
    assert _light_process('{ "a" : [ 1, 2 ] }', 100) == '{"a":[1,2]}'
    big = {"items": [{"id": i, "name": f"n{i}", "payload": "x" * 200} for i in range(200)]}
    summary = json.loads(_light_process(json.dumps(big), 500))
    assert summary["summaryType"] == "JSON structural summary"
    assert "items: array(length=200)" in summary["structure"]
    assert "items[0].id=0" in summary["values"] and "items[199].id=199" in summary["values"]
    assert json.loads(_json_structural_summary([]))["structure"] == ["$: array(length=0)"]


def test_head_tail_truncation_fits_and_marks_the_middle() -> None:
    text = "\n\n".join(f"paragraph {i} " + "word " * 50 for i in range(100))
    cut = head_tail_truncate(text, 500)
    assert TRUNCATED_MARKER in cut and count_tokens(cut) <= 500
    assert cut.startswith("paragraph 0") and cut.rstrip().endswith("word")


async def test_small_tool_response_is_unchanged(server: ScriptedOpenAIServer) -> None:
    outcome = await compress_tool_response("short", server.chat_model(), max_context=8000)
    assert (outcome.response, outcome.compressed, outcome.usage) == ("short", False, None)
    assert server.chat_requests == []


async def test_light_processing_avoids_the_llm_when_it_is_enough(server: ScriptedOpenAIServer) -> None:
    noisy = " ".join(f"https://example.com/{i}/page?q={i}" for i in range(3000)) + " keep"
    assert count_tokens(noisy) > 4096
    outcome = await compress_tool_response(noisy, server.chat_model(), max_context=8000)
    assert outcome.compressed and outcome.usage is None and outcome.response == "keep"
    assert server.chat_requests == []


async def test_tool_response_llm_compression_is_billed_in_the_tools_single_push(
    server: ScriptedOpenAIServer, recorder: Recorder
) -> None:
    huge = "\n".join(f"row {i}: value {i * 7} status ok" for i in range(3000))

    def dump(ctx: Any) -> ToolResult:
        return ToolResult(response=huge, usages=[{"moduleName": "tool:dump", "totalPoints": 1}])

    tool = ToolDefinition(name="dump", execute=dump, description="Dumps rows.")

    def script(request: Any) -> Any:
        if request.json.get("tools"):
            turn = len([r for r in server.chat_requests if r.get("tools")])
            return tool_call_turn([("dump", {})]) if turn == 1 else text_turn("done")
        return text_turn("rows 0-2999, all ok")

    server.set_script(script)
    runtime = make_runtime(
        server, recorder, tools=[tool], model_options={"max_context": 16000, "max_response": 1000}
    )
    result = await run_agent_loop(
        None, AgentLoopInput(messages=[{"role": "user", "content": "dump"}]), runtime
    )
    assert result.status == "done"
    tool_pushes = [p for p in recorder.pushes if p[0].module_name == "tool:dump"]
    assert len(tool_pushes) == 1
    assert [u.module_name for u in tool_pushes[0]][0] == "tool:dump"
    assert {u.module_name for u in tool_pushes[0][1:]} == {TOOL_RESPONSE_COMPRESS_MODULE}
    end = recorder.of("tool_run_end")[0]
    assert end.raw_response == huge and end.tool_response_compress is not None
    assert "rows 0-2999, all ok" in end.response
    assert [m for m in result.complete_messages if m["role"] == "tool"][0]["content"] == end.response


def _long_history() -> list[dict[str, Any]]:
    return [{"role": "system", "content": "S"}, {"role": "user", "content": "alpha " * 7000}]


async def test_empty_checkpoint_answer_keeps_messages_but_bills_the_call(
    server: ScriptedOpenAIServer,
) -> None:
    from fathom.agent import compress_history

    server.set_script([text_turn("", usage=(7000, 0))])
    messages = _long_history()
    outcome = await compress_history(messages, server.chat_model(), max_context=8000)
    assert (outcome.status, outcome.messages, outcome.context_checkpoint) == (
        "empty_response",
        messages,
        None,
    )
    assert outcome.usage is not None and outcome.usage.input_tokens == 7000
    assert outcome.request_ids == ["req_scripted_1"]


async def test_failed_checkpoint_call_keeps_messages_unbilled(server: ScriptedOpenAIServer) -> None:
    from fathom.agent import compress_history
    from fathom.testing import error_turn

    server.set_script([error_turn(400, "no")])
    messages = _long_history()
    outcome = await compress_history(messages, server.chat_model(), max_context=8000)
    assert (outcome.status, outcome.messages, outcome.usage) == ("error", messages, None)


async def test_nothing_to_summarise_or_under_threshold_is_unchanged(server: ScriptedOpenAIServer) -> None:
    from fathom.agent import compress_history

    only_system = [{"role": "system", "content": "alpha " * 7000}]
    assert (await compress_history(only_system, server.chat_model(), max_context=8000)).status == "unchanged"
    short = [{"role": "user", "content": "hi"}]
    assert (await compress_history(short, server.chat_model(), max_context=8000)).messages == short
    assert server.chat_requests == []


async def test_tools_schema_counts_toward_the_trigger(server: ScriptedOpenAIServer) -> None:
    from fathom.agent import compress_history
    from fathom.llm import count_message_tokens

    messages = [{"role": "user", "content": "alpha " * 6000}]
    tools = [
        {"type": "function", "function": {"name": f"tool_{i}", "description": "beta " * 40, "parameters": {}}}
        for i in range(20)
    ]
    assert count_message_tokens(messages) <= 6400 < count_message_tokens(messages, tools)
    server.set_script([text_turn("<context_checkpoint>s</context_checkpoint>")])
    outcome = await compress_history(messages, server.chat_model(), max_context=8000, tools=tools)
    assert outcome.status == "compressed"
    assert outcome.messages == [
        {"role": "user", "content": "<context_checkpoint>s</context_checkpoint>", "hideInUI": True}
    ]
