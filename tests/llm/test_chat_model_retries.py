"""Retries on 429/5xx (not on other 4xx), timeouts and cancellation of a streaming call."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from fathom.llm import ModelConfig, ModelRequestError, OpenAIChatModel, RetryPolicy, TextDelta
from fathom.testing import ScriptedOpenAIServer, error_turn, text_turn

USER = [{"role": "user", "content": "hi"}]


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as running:
        yield running


class RecordingSleep:
    """Records requested backoff delays and returns at once (keeps the suite fast)."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def chat_model(server: ScriptedOpenAIServer, sleep: RecordingSleep, **config: object) -> OpenAIChatModel:
    options: dict[str, object] = {"id": "m", "base_url": server.base_url}
    options.update(config)
    return OpenAIChatModel(
        ModelConfig.model_validate(options), retry=RetryPolicy(initial_delay=0.5), sleep=sleep
    )


@pytest.mark.parametrize("status", [429, 500, 502, 503])
async def test_stream_retries_retryable_status_then_succeeds(
    server: ScriptedOpenAIServer, status: int
) -> None:
    sleep = RecordingSleep()
    server.add_turns(error_turn(status, "busy"), text_turn("recovered"))
    result = await chat_model(server, sleep).stream(USER).collect()
    assert result.content == "recovered"
    assert len(server.chat_requests) == 2
    assert len(sleep.delays) == 1 and 0.375 <= sleep.delays[0] <= 0.5


async def test_complete_retries_429_with_exponential_backoff(server: ScriptedOpenAIServer) -> None:
    sleep = RecordingSleep()
    server.add_turns(error_turn(429), error_turn(429), text_turn("third time"))
    result = await chat_model(server, sleep, max_retries=2).complete(USER)
    assert result.content == "third time"
    assert len(server.chat_requests) == 3
    assert 0.375 <= sleep.delays[0] <= 0.5 and 0.75 <= sleep.delays[1] <= 1.0


async def test_retry_after_header_sets_the_delay(server: ScriptedOpenAIServer) -> None:
    sleep = RecordingSleep()
    server.add_turns(error_turn(429, retry_after=1.5), text_turn("ok"))
    await chat_model(server, sleep).stream(USER).collect()
    assert sleep.delays == [1.5]


@pytest.mark.parametrize("status", [400, 401, 404, 422])
async def test_client_errors_are_not_retried(server: ScriptedOpenAIServer, status: int) -> None:
    sleep = RecordingSleep()
    server.add_turns(error_turn(status, "bad request: messages[0] is invalid"), text_turn("never"))
    with pytest.raises(ModelRequestError) as info:
        await chat_model(server, sleep).stream(USER).collect()
    assert info.value.status_code == status
    assert info.value.retryable is False
    expected = f"model 'm' request failed with HTTP {status}: bad request: messages[0] is invalid"
    assert str(info.value) == expected
    assert len(server.chat_requests) == 1
    assert sleep.delays == []


async def test_retries_give_up_after_max_retries(server: ScriptedOpenAIServer) -> None:
    sleep = RecordingSleep()
    server.add_turns(*[error_turn(500, "down")] * 5)
    with pytest.raises(ModelRequestError) as info:
        await chat_model(server, sleep, max_retries=1).complete(USER)
    assert info.value.status_code == 500 and info.value.attempts == 2
    assert len(server.chat_requests) == 2


async def test_unreachable_endpoint_is_a_retryable_error(server: ScriptedOpenAIServer) -> None:
    sleep = RecordingSleep()
    base_url = server.base_url
    server.stop()
    with pytest.raises(ModelRequestError, match="endpoint unreachable") as info:
        await chat_model(server, sleep, base_url=base_url, max_retries=1).stream(USER).collect()
    assert info.value.retryable is True and len(sleep.delays) == 1


async def test_read_timeout_between_chunks_raises_timeout_error(server: ScriptedOpenAIServer) -> None:
    sleep = RecordingSleep()
    server.add_turns(text_turn("slow answer", delay=2.0))
    model = chat_model(server, sleep, timeout=0.2, max_retries=0)
    with pytest.raises(ModelRequestError, match="timed out"):
        await model.stream(USER).collect()


async def test_cancelling_the_consumer_closes_the_http_stream(server: ScriptedOpenAIServer) -> None:
    sleep = RecordingSleep()
    server.add_turns(text_turn("word " * 400, delay=0.02, text_chunk_chars=5))
    model = chat_model(server, sleep)
    first_delta = asyncio.Event()
    received: list[str] = []

    async def consume() -> None:
        async for event in model.stream(USER):
            if isinstance(event, TextDelta):
                received.append(event.text)
                first_delta.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first_delta.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    request = server.requests_to("/chat/completions")[0]
    assert await asyncio.to_thread(request.wait_disconnected, 10)
    assert 0 < len(received) < 400


async def test_leaving_the_stream_context_early_closes_the_connection(server: ScriptedOpenAIServer) -> None:
    server.add_turns(text_turn("word " * 400, delay=0.02, text_chunk_chars=5), text_turn("next"))
    model = chat_model(server, RecordingSleep())
    async with model.stream(USER) as stream:
        async for event in stream:
            if isinstance(event, TextDelta):
                break
    request = server.requests_to("/chat/completions")[0]
    assert await asyncio.to_thread(request.wait_disconnected, 10)
    assert (await model.complete(USER)).content == "next"
