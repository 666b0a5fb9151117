"""The scripted OpenAI-compatible server, driven by the real ``openai`` client (sync and async)."""

from __future__ import annotations

import asyncio
import json
import math

import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fathom.testing import (
    RecordedRequest,
    ScriptedOpenAIServer,
    ScriptedToolCall,
    Turn,
    error_turn,
    hash_embedding,
    text_turn,
    tool_call_turn,
)

USER = [{"role": "user", "content": "hi"}]


def sync_client(server: ScriptedOpenAIServer, **options: object) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0, **options)  # type: ignore[arg-type]


def test_base_url_is_loopback_with_v1_suffix() -> None:
    with ScriptedOpenAIServer() as server:
        assert server.port > 0
        assert server.base_url == f"http://127.0.0.1:{server.port}/v1"


def test_sync_client_gets_scripted_turns_in_order_and_requests_are_recorded() -> None:
    with ScriptedOpenAIServer(["first", text_turn("second")]) as server:
        client = sync_client(server)
        one = client.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
        two = client.chat.completions.create(
            model="m", messages=USER + [{"role": "user", "content": "again"}]
        )  # type: ignore[arg-type]
        assert (one.choices[0].message.content, two.choices[0].message.content) == ("first", "second")
        assert server.chat_requests[1]["messages"][-1] == {"role": "user", "content": "again"}
        assert server.requests[0].headers["authorization"] == "Bearer sk-test"
        assert server.remaining_turns == 0


def test_streamed_tool_calls_arrive_split_over_several_chunks() -> None:
    call = ScriptedToolCall("lookup", {"city": "Paris", "days": 3}, id="call_x")
    with ScriptedOpenAIServer([tool_call_turn([call], arg_fragments=3)]) as server:
        stream = sync_client(server).chat.completions.create(
            model="m",
            messages=USER,  # type: ignore[arg-type]
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = list(stream)
    fragments = [
        tc.function.arguments
        for chunk in chunks
        for choice in chunk.choices
        for tc in choice.delta.tool_calls or []
        if tc.function is not None and tc.function.arguments
    ]
    assert len(fragments) == 3
    assert json.loads("".join(fragments)) == {"city": "Paris", "days": 3}
    heads = [tc for c in chunks for ch in c.choices for tc in ch.delta.tool_calls or [] if tc.id]
    assert [(h.id, h.function.name if h.function else None) for h in heads] == [("call_x", "lookup")]
    finishes = [ch.finish_reason for c in chunks for ch in c.choices if ch.finish_reason]
    assert finishes == ["tool_calls"]
    assert chunks[-1].choices == [] and chunks[-1].usage is not None


def test_usage_chunk_only_when_include_usage_is_requested() -> None:
    with ScriptedOpenAIServer(["a", "b", text_turn("c", send_usage=False)]) as server:
        client = sync_client(server)
        without = list(client.chat.completions.create(model="m", messages=USER, stream=True))  # type: ignore[arg-type]
        with_usage = list(
            client.chat.completions.create(
                model="m",
                messages=USER,  # type: ignore[arg-type]
                stream=True,
                stream_options={"include_usage": True},
            )
        )
        ignored = list(
            client.chat.completions.create(
                model="m",
                messages=USER,  # type: ignore[arg-type]
                stream=True,
                stream_options={"include_usage": True},
            )
        )
    assert all(chunk.usage is None for chunk in without)
    assert with_usage[-1].usage is not None and with_usage[-1].usage.completion_tokens == 1
    assert all(chunk.usage is None for chunk in ignored)


def test_reasoning_content_is_streamed_before_content() -> None:
    with ScriptedOpenAIServer([text_turn("answer", reasoning="think")]) as server:
        chunks = list(sync_client(server).chat.completions.create(model="m", messages=USER, stream=True))  # type: ignore[arg-type]
    pieces = [
        ("r", getattr(ch.delta, "reasoning_content", None) or "")
        if getattr(ch.delta, "reasoning_content", None)
        else ("c", ch.delta.content or "")
        for chunk in chunks
        for ch in chunk.choices
        if getattr(ch.delta, "reasoning_content", None) or ch.delta.content
    ]
    assert "".join(p for k, p in pieces if k == "r") == "think"
    assert "".join(p for k, p in pieces if k == "c") == "answer"
    assert pieces[0][0] == "r" and pieces[-1][0] == "c"


def test_script_function_sees_the_request() -> None:
    def echo(request: RecordedRequest) -> Turn:
        last = request.json["messages"][-1]["content"]
        return text_turn(f"you said: {last}", usage=(7, 3))

    with ScriptedOpenAIServer(echo) as server:
        client = sync_client(server)
        for word in ("one", "two"):
            reply = client.chat.completions.create(model="m", messages=[{"role": "user", "content": word}])
            assert reply.choices[0].message.content == f"you said: {word}"
            assert reply.usage is not None and (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (
                7,
                3,
            )


def test_exhausted_script_is_a_400_naming_the_problem() -> None:
    with ScriptedOpenAIServer(["only"]) as server:
        client = sync_client(server)
        client.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
        with pytest.raises(openai.BadRequestError, match="script exhausted"):
            client.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]


def test_broken_script_function_surfaces_as_500() -> None:
    def broken(request: RecordedRequest) -> Turn:
        raise KeyError("oops")

    with ScriptedOpenAIServer(broken) as server, pytest.raises(openai.InternalServerError, match="oops"):
        sync_client(server).chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]


def test_error_turn_sets_status_body_and_retry_after() -> None:
    server = ScriptedOpenAIServer([error_turn(429, "slow down", retry_after=0.25)])
    with server, pytest.raises(openai.RateLimitError) as info:
        sync_client(server).chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
    assert info.value.response.headers["retry-after-ms"] == "250"
    assert info.value.body == {
        "message": "slow down",
        "type": "rate_limit_error",
        "param": None,
        "code": "429",
    }


def test_base64_and_float_embeddings_agree() -> None:
    with ScriptedOpenAIServer(embedding_dim=48) as server:
        client = sync_client(server)
        as_b64 = client.embeddings.create(model="e", input=["alpha beta", "gamma"])  # SDK asks for base64
        as_float = client.embeddings.create(model="e", input=["alpha beta", "gamma"], encoding_format="float")
    assert server.embedding_requests[0]["encoding_format"] == "base64"
    for left, right in zip(as_b64.data, as_float.data, strict=True):
        assert left.embedding == pytest.approx(right.embedding, abs=1e-6)
        assert len(left.embedding) == 48


def test_models_route_lists_configured_models_and_unknown_route_is_404() -> None:
    with ScriptedOpenAIServer(models=["a", "b"]) as server:
        client = sync_client(server)
        assert [m.id for m in client.models.list()] == ["a", "b"]
        with pytest.raises(openai.NotFoundError):
            client.post("/nope", cast_to=object, body={})


def test_api_key_is_enforced_when_set() -> None:
    with ScriptedOpenAIServer(["ok"], api_key="sk-good") as server:
        with pytest.raises(openai.AuthenticationError):
            sync_client(server).chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
        good = openai.OpenAI(base_url=server.base_url, api_key="sk-good", max_retries=0)
        assert good.chat.completions.create(model="m", messages=USER).choices[0].message.content == "ok"  # type: ignore[arg-type]


async def test_async_context_manager_with_async_client() -> None:
    async with ScriptedOpenAIServer([text_turn("async hello")]) as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        stream = await client.chat.completions.create(model="m", messages=USER, stream=True)  # type: ignore[arg-type]
        text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
        await client.close()
    assert text == "async hello"


def test_rerank_top_n_and_scores() -> None:
    with ScriptedOpenAIServer() as server:
        data = sync_client(server).post(
            "/rerank",
            cast_to=object,
            body={
                "model": "r",
                "query": "red apple",
                "documents": ["green pear", "red apple pie", "red car"],
            },
        )
    assert isinstance(data, dict)
    assert [(r["index"], r["relevance_score"]) for r in data["results"]] == [(1, 1.0), (2, 0.5), (0, 0.0)]


def test_server_can_restart_on_a_new_port_after_stop() -> None:
    server = ScriptedOpenAIServer(["one", "two"])
    with server:
        sync_client(server).chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
    with server:
        reply = sync_client(server).chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
    assert reply.choices[0].message.content == "two"


@settings(max_examples=50, deadline=None)
@given(st.text(max_size=80), st.integers(min_value=1, max_value=64))
def test_hash_embedding_is_deterministic_unit_length(text: str, dim: int) -> None:
    vector = hash_embedding(text, dim)
    assert vector == hash_embedding(text, dim)
    assert len(vector) == dim
    assert math.isclose(math.sqrt(sum(v * v for v in vector)), 1.0, rel_tol=1e-9)


def test_hash_embedding_puts_texts_sharing_words_closer() -> None:
    def cos(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True))

    query = hash_embedding("vector database search")
    related = hash_embedding("search in a vector database")
    unrelated = hash_embedding("banana bread recipe")
    assert cos(query, related) > cos(query, unrelated)


async def test_chat_model_helper_targets_the_server_and_requests_expose_messages_and_tools() -> None:
    tools = [{"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}]
    async with ScriptedOpenAIServer([error_turn(503), "ok"]) as server:
        model = server.chat_model(max_response=50)
        assert model.config.base_url == server.base_url and model.config.max_response == 50
        result = await model.stream(USER, tools=tools).collect()
    assert result.content == "ok"
    recorded = server.requests_to("/chat/completions")
    assert len(recorded) == 2
    assert recorded[1].messages == USER
    assert recorded[1].tool_names == ["search"]


async def test_concurrent_streams_are_served_independently() -> None:
    def by_question(request: RecordedRequest) -> Turn:
        return text_turn(f"answer to {request.messages[-1]['content']}", delay=0.01)

    async with ScriptedOpenAIServer(by_question) as server:
        model = server.chat_model()
        questions = [f"q{i}" for i in range(6)]
        results = await asyncio.gather(
            *(model.stream([{"role": "user", "content": q}]).collect() for q in questions)
        )
    assert [r.content for r in results] == [f"answer to {q}" for q in questions]
    assert len({r.request_id for r in results}) == 6
