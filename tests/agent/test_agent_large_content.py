"""compressLargeContent stages (spec §3.12.2) against the scripted model server."""

from __future__ import annotations

from typing import Any

from fathom.agent.compress import TRUNCATED_MARKER
from fathom.agent.compress.large_content import (
    ANCHORS_HEADER,
    EXCERPTS_HEADER,
    _add_source_context,
    _chunk_plan,
    compress_large_content,
)
from fathom.llm import count_tokens
from fathom.testing import ScriptedOpenAIServer, error_turn, text_turn


def test_chunk_plan_follows_the_formula() -> None:
    text = "x" * 40000
    chunks, budget = _chunk_plan(text, 4096, 16000)
    # tokens = min(8000, max(1, (16000 - 4096) // 2)) = 5952 → 17856 characters per chunk
    assert [len(c) for c in chunks] == [17856, 17856, 4288]
    assert budget == int(0.65 * 4096 / 3)


async def test_fitting_or_locally_cleanable_text_never_calls_the_model(server: ScriptedOpenAIServer) -> None:
    model = server.chat_model()
    assert (await compress_large_content("short", 100, model, max_context=8000)).text == "short"
    urls = " ".join(f"https://example.com/page/{i}" for i in range(500)) + " fact"
    result = await compress_large_content(urls, 100, model, max_context=8000)
    assert result.text.strip() == "fact" and result.usages == []
    assert server.chat_requests == []


async def test_chunks_compress_in_parallel_and_empty_answers_keep_the_chunk(
    server: ScriptedOpenAIServer,
) -> None:
    def script(request: Any) -> Any:
        first = "line 0 value 0" in request.json["messages"][-1]["content"]
        return text_turn("summary one" if first else "", usage=(50, 5))

    server.set_script(script)
    text = "\n".join(f"line {i} value {i * 3}" for i in range(2400))
    chunks, _ = _chunk_plan(text, 9000, 40000)
    assert len(chunks) == 2 and count_tokens(chunks[1]) < 8000 < count_tokens(text)
    result = await compress_large_content(text, 9000, server.chat_model(), max_context=40000)
    assert EXCERPTS_HEADER in result.text  # under-filled: topped up with source excerpts
    assert len(server.chat_requests) == 2 and len(result.usages) == 2
    assert result.text.startswith("summary one\n\n" + chunks[1][:20])
    assert count_tokens(result.text) <= 9000


async def test_merge_rounds_then_deterministic_truncation(server: ScriptedOpenAIServer) -> None:
    source = "\n\n".join(f"paragraph {i} " + "data " * 40 for i in range(200))

    def echo_chunk(request: Any) -> Any:  # a model that gains nothing: it repeats its chunk
        chunk = request.json["messages"][-1]["content"].split("\n\n", 1)[1]
        return text_turn(chunk, usage=(10, 10), text_chunk_chars=10**6)

    server.set_script(echo_chunk)
    result = await compress_large_content(source, 1000, server.chat_model(), max_context=8000)
    assert TRUNCATED_MARKER in result.text and count_tokens(result.text) <= 1000
    assert result.text.startswith("paragraph 0")
    assert len(result.request_ids) == len(server.chat_requests) >= 2


async def test_model_failure_returns_cleaned_text_unbilled(server: ScriptedOpenAIServer) -> None:
    server.set_script(lambda request: error_turn(400, "no"))
    text = "\n\n".join(f"block {i} " + "word " * 30 for i in range(300))
    result = await compress_large_content(text, 800, server.chat_model(), max_context=8000)
    assert result.usages == [] and count_tokens(result.text) <= 800


def test_underfilled_results_get_excerpts_and_missing_anchors() -> None:
    source = "# Title\nStatus: ok\n" + "\n".join(f"Item{i}: {'filler ' * 20}" for i in range(400))
    topped = _add_source_context("tiny", source, 2000)
    assert topped.startswith("tiny\n\n" + EXCERPTS_HEADER)
    assert count_tokens(topped) <= 2000 * 0.96 + 1
    assert _add_source_context("tiny", "short source", 2000) == "tiny"
    assert ANCHORS_HEADER not in _add_source_context("x " * 700, source, 2000)
