"""OpenAIChatModel streaming and non-streaming against the scripted server through the real SDK."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from fathom.llm import (
    FinishEvent,
    ModelConfig,
    OpenAIChatModel,
    ReasoningDelta,
    TextDelta,
    ToolCallStart,
    ToolParamsDelta,
    UsageEvent,
    count_message_tokens,
    count_tokens,
)
from fathom.testing import ScriptedOpenAIServer, Turn, text_turn, tool_call_turn

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Search the knowledge base",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
        },
    }
]
USER = [{"role": "user", "content": "What is Fathom?"}]


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as running:
        yield running


def chat_model(server: ScriptedOpenAIServer, **config: object) -> OpenAIChatModel:
    options: dict[str, object] = {"id": "scripted-chat", "base_url": server.base_url, "max_context": 8000}
    options.update(config)
    return OpenAIChatModel(ModelConfig.model_validate(options))


async def test_tool_call_fragments_stream_in_order_and_assemble(server: ScriptedOpenAIServer) -> None:
    args_a = {"q": "what is a knowledge base, exactly?", "limit": 5}
    args_b = {"q": "second"}
    server.add_turns(tool_call_turn([("search", args_a, "call_a"), ("search", args_b)], arg_fragments=4))
    events = [event async for event in chat_model(server).stream(USER, tools=TOOLS)]

    kinds = [event.type for event in events]
    assert kinds[0] == "tool_call" and kinds[-2:] == ["usage", "finish"]
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert [(s.call_id, s.name, s.index) for s in starts] == [
        ("call_a", "search", 0),
        ("call_1_1", "search", 1),
    ]
    for start, expected in zip(starts, (args_a, args_b), strict=True):
        deltas = [
            e.args_delta for e in events if isinstance(e, ToolParamsDelta) and e.call_id == start.call_id
        ]
        assert len(deltas) == 4
        assert json.loads("".join(deltas)) == expected
    # every fragment of a call comes after its tool_call event and before the next call's
    second = events.index(starts[1])
    assert all(e.call_id == "call_a" for e in events[:second] if isinstance(e, ToolParamsDelta))

    finish = events[-1]
    assert isinstance(finish, FinishEvent)
    assert finish.finish_reason == "tool_calls"
    assert [c.parsed_arguments() for c in finish.result.tool_calls] == [args_a, args_b]
    assert finish.result.message["tool_calls"][0] == {
        "id": "call_a",
        "type": "function",
        "function": {"name": "search", "arguments": json.dumps(args_a)},
    }
    sent = server.chat_requests[0]
    assert sent["tools"] == TOOLS and sent["stream"] is True
    assert sent["stream_options"] == {"include_usage": True}


async def test_text_and_reasoning_deltas_concatenate_to_the_result(server: ScriptedOpenAIServer) -> None:
    server.add_turns(text_turn("Fathom answers questions.", reasoning="The user asks about Fathom."))
    stream = chat_model(server).stream(USER)
    events = [event async for event in stream]
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    reasoning = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    assert text == "Fathom answers questions."
    assert reasoning == "The user asks about Fathom."
    assert sum(isinstance(e, TextDelta) for e in events) > 1
    first_text = next(i for i, e in enumerate(events) if isinstance(e, TextDelta))
    assert all(isinstance(e, ReasoningDelta) for e in events[:first_text])
    assert stream.result is not None
    assert stream.result.message == {
        "role": "assistant",
        "content": "Fathom answers questions.",
        "reasoning_content": "The user asks about Fathom.",
    }
    assert stream.result.finish_reason == "stop"


async def test_usage_comes_from_the_usage_chunk_when_sent(server: ScriptedOpenAIServer) -> None:
    server.add_turns(text_turn("hello", usage=(1234, 56)))
    events = [event async for event in chat_model(server).stream(USER)]
    usage = next(e for e in events if isinstance(e, UsageEvent)).usage
    assert (usage.input_tokens, usage.output_tokens, usage.estimated) == (1234, 56, False)


async def test_usage_is_counted_locally_when_the_server_sends_none(server: ScriptedOpenAIServer) -> None:
    server.add_turns(text_turn("hello there, friend", usage=(1234, 56), send_usage=False))
    result = await chat_model(server).stream(USER, tools=TOOLS).collect()
    assert result.usage.estimated is True
    assert result.usage.input_tokens == count_message_tokens(USER, TOOLS)
    assert result.usage.output_tokens == count_tokens("hello there, friend")


async def test_request_id_comes_from_the_response_header(server: ScriptedOpenAIServer) -> None:
    server.add_turns("first", "second")
    model = chat_model(server)
    first = await model.stream(USER).collect()
    second = await model.complete(USER)
    assert (first.request_id, second.request_id) == ("req_scripted_1", "req_scripted_2")
    assert first.response_id == "chatcmpl-scripted-1"


async def test_complete_returns_the_assembled_message_with_tool_calls(server: ScriptedOpenAIServer) -> None:
    server.add_turns(tool_call_turn([("search", {"q": "x"}, "call_9")], content="Looking.", usage=(10, 4)))
    result = await chat_model(server).complete(USER, tools=TOOLS, tool_choice="auto", temperature=0.2)
    assert result.message == {
        "role": "assistant",
        "content": "Looking.",
        "tool_calls": [
            {"id": "call_9", "type": "function", "function": {"name": "search", "arguments": '{"q": "x"}'}}
        ],
    }
    assert (result.usage.input_tokens, result.usage.output_tokens) == (10, 4)
    sent = server.chat_requests[0]
    assert "stream" not in sent or sent["stream"] is False
    assert (sent["tool_choice"], sent["temperature"]) == ("auto", 0.2)


async def test_transcript_of_plain_dicts_round_trips_to_the_server(server: ScriptedOpenAIServer) -> None:
    server.add_turns("ok")
    transcript = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "search", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "nothing found"},
    ]
    await chat_model(server).stream(transcript, tools=TOOLS, tool_choice="none").collect()
    sent = server.chat_requests[0]
    assert sent["messages"] == transcript
    assert sent["tool_choice"] == "none"


async def test_max_tokens_is_capped_at_max_response_and_default_params_are_sent(
    server: ScriptedOpenAIServer,
) -> None:
    server.add_turns("ok")
    model = chat_model(server, max_response=100, default_params={"top_k": 20}, api_model="upstream-name")
    await model.complete(USER, max_tokens=5000)
    sent = server.chat_requests[0]
    assert (sent["max_tokens"], sent["top_k"], sent["model"]) == (100, 20, "upstream-name")


async def test_tool_choice_is_not_sent_without_tools(server: ScriptedOpenAIServer) -> None:
    server.add_turns("ok")
    await chat_model(server).complete(USER, tool_choice="none")
    assert "tool_choice" not in server.chat_requests[0]
    assert "tools" not in server.chat_requests[0]


async def test_stream_error_after_content_raises_without_retry(server: ScriptedOpenAIServer) -> None:
    from fathom.llm import ModelRequestError

    server.add_turns(Turn(content="partial", stream_error="upstream overloaded"), "never used")
    seen: list[str] = []
    with pytest.raises(ModelRequestError, match="upstream overloaded"):
        async for event in chat_model(server).stream(USER):
            if isinstance(event, TextDelta):
                seen.append(event.text)
    assert "".join(seen) == "partial"
    assert len(server.chat_requests) == 1
