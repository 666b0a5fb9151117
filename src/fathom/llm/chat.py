"""OpenAI-compatible chat model client: streaming with incremental tool calls, retries, usage."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from types import TracebackType
from typing import Any, TypeVar

import httpx2
import openai

from fathom.llm.endpoint import EndpointClient, Sleep
from fathom.llm.errors import EndpointError, ModelRequestError
from fathom.llm.events import CompletionResult, FinishEvent, StreamEvent, ToolCall, Usage
from fathom.llm.http_stream import StreamingEndpoint, streamable
from fathom.llm.model_config import ModelConfig
from fathom.llm.openai_client import NO_KEY, ssl_context
from fathom.llm.retry import RetryPolicy
from fathom.llm.stream_assembler import StreamAssembler, new_call_id, usage_from
from fathom.llm.tokens import count_message_tokens, count_tokens, count_tool_call_tokens
from fathom.llm.waits import model_waits
from fathom.llm.wire import SSEDecoder

T = TypeVar("T")


class ChatStream:
    """An async iterator of :data:`StreamEvent` that is also an async context manager.

    Leaving the ``async with`` block (or ``aclose()``, or cancelling the consuming task) closes the
    HTTP response, so the endpoint sees the disconnect. ``result`` holds the assembled completion once
    the ``FinishEvent`` has been yielded.
    """

    def __init__(self, events: AsyncIterator[StreamEvent]) -> None:
        self._events = events
        self.result: CompletionResult | None = None

    def __aiter__(self) -> ChatStream:
        return self

    async def __anext__(self) -> StreamEvent:
        event = await self._events.__anext__()
        if isinstance(event, FinishEvent):
            self.result = event.result
        return event

    async def aclose(self) -> None:
        """Stop the stream and close the connection."""
        aclose = getattr(self._events, "aclose", None)
        if aclose is not None:
            await aclose()

    async def __aenter__(self) -> ChatStream:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def collect(self) -> CompletionResult:
        """Drain the stream and return the assembled result."""
        async with self:
            async for _ in self:
                pass
        if self.result is None:  # pragma: no cover - the generator always ends with FinishEvent
            raise ModelRequestError("stream ended without a finish event")
        return self.result


def _local_usage(messages: Sequence[Any], tools: Sequence[Any] | None) -> Callable[[CompletionResult], Usage]:
    def count(result: CompletionResult) -> Usage:
        output = count_tokens(result.content) + count_tokens(result.reasoning)
        if result.tool_calls:
            output += count_tool_call_tokens([call.to_openai() for call in result.tool_calls])
        return Usage(input_tokens=count_message_tokens(messages, tools), output_tokens=output, estimated=True)

    return count


_FAILURES = (openai.OpenAIError, ModelRequestError, EndpointError)


class OpenAIChatModel(EndpointClient):
    """Chat completions against one configured OpenAI-compatible endpoint (async).

    Streamed completions go through :class:`StreamingEndpoint` (a lean pooled HTTP/1.1 client: the SDK
    and httpx cost more CPU than the rest of a chat turn); the SDK serves non-streamed completions, a
    client passed in, and endpoints behind a proxy from the environment or with a query string.
    """

    _failures = _FAILURES

    def __init__(
        self,
        config: ModelConfig,
        *,
        client: openai.AsyncOpenAI | None = None,
        retry: RetryPolicy | None = None,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self._endpoint: StreamingEndpoint | None = None
        if client is None and streamable(config.base_url):
            self._endpoint = StreamingEndpoint(
                config.base_url,
                headers={
                    "Authorization": f"Bearer {config.api_key_value() or NO_KEY}",
                    "User-Agent": f"fathom OpenAI/Python {openai.__version__}",
                },
                connect_timeout=min(config.connect_timeout, config.timeout),
                read_timeout=config.timeout,
                ssl_context=ssl_context,
            )
        super().__init__(config, client=client, retry=retry, sleep=sleep)

    async def aclose(self) -> None:
        """Close the underlying HTTP clients."""
        if self._endpoint is not None:
            await self._endpoint.aclose()
        await super().aclose()

    def _body(
        self,
        messages: Sequence[Any],
        tools: Sequence[Any] | None,
        tool_choice: Any,
        params: Mapping[str, Any],
    ) -> dict[str, Any]:
        extra = {**self.config.default_params, **params}
        if isinstance(extra.get("max_tokens"), int):
            extra["max_tokens"] = min(extra["max_tokens"], self.config.max_response)
        body: dict[str, Any] = {
            "model": self.config.request_model,
            "messages": [_plain(message) for message in messages],
            "extra_body": extra or None,
        }
        if tools:
            body["tools"] = [_plain(tool) for tool in tools]
            if tool_choice is not None:
                body["tool_choice"] = tool_choice
        return body

    def stream(
        self,
        messages: Sequence[Any],
        tools: Sequence[Any] | None = None,
        tool_choice: Any = None,
        **params: Any,
    ) -> ChatStream:
        """Stream a completion as typed events. ``params`` are extra request fields (temperature, ...)."""
        return ChatStream(self._stream_events(messages, tools, tool_choice, params))

    async def _stream_events(
        self,
        messages: Sequence[Any],
        tools: Sequence[Any] | None,
        tool_choice: Any,
        params: Mapping[str, Any],
    ) -> AsyncIterator[StreamEvent]:
        body = self._body(messages, tools, tool_choice, params)
        extra = body.pop("extra_body") or {}
        payload = {**body, **extra, "stream": True, "stream_options": {"include_usage": True}}
        yielded = False
        attempt = 0
        while True:
            attempt += 1
            assembler = StreamAssembler()
            chunks: _Chunks | None = None
            try:
                model_waits()
                chunks = await self._open_stream(payload)
                async for chunk in chunks:
                    for event in assembler.feed(chunk):
                        yielded = True
                        yield event
                for event in assembler.finish(
                    request_id=chunks.request_id,
                    model=self.config.request_model,
                    count_usage=_local_usage(messages, tools),
                ):
                    yield event
                return
            except _FAILURES as exc:
                # Only a stream that has not produced anything yet may be retried.
                delay = self._retry_delay(exc, attempt, retry_allowed=not yielded)
            finally:
                if chunks is not None:
                    await chunks.aclose()
            await self._sleep(delay)

    async def _open_stream(self, payload: dict[str, Any]) -> _Chunks:
        if self._endpoint is not None:
            response = await self._endpoint.post_sse("/chat/completions", payload)
            return _Chunks(response.events(), response.headers.get("x-request-id"), response.aclose)
        # the SDK sends the request (auth, timeouts, status errors) of the JSON body as built here, and
        # the chunks are read as plain JSON: its body transform and per-chunk pydantic models cost more
        # CPU than the rest of a chat turn
        sdk_response = await self.client.post(
            "/chat/completions", cast_to=httpx2.Response, body=payload, stream=True
        )
        return _Chunks(
            _sse_chunks(sdk_response), sdk_response.headers.get("x-request-id"), sdk_response.aclose
        )

    async def complete(
        self,
        messages: Sequence[Any],
        tools: Sequence[Any] | None = None,
        tool_choice: Any = None,
        **params: Any,
    ) -> CompletionResult:
        """One non-streamed completion, assembled into a :class:`CompletionResult`."""
        body = self._body(messages, tools, tool_choice, params)

        async def attempt(_: int) -> Any:
            model_waits()
            return await self.client.chat.completions.create(**body, stream=False)

        completion = await self._with_retries(attempt)
        return self._result_from_completion(completion, messages, tools)

    def _result_from_completion(
        self, completion: Any, messages: Sequence[Any], tools: Sequence[Any] | None
    ) -> CompletionResult:
        choice = completion.choices[0] if completion.choices else None
        message = choice.message if choice is not None else None
        calls = tuple(
            ToolCall(
                id=call.id or new_call_id(),
                name=call.function.name or "",
                arguments=call.function.arguments or "",
            )
            for call in ((message.tool_calls if message is not None else None) or [])
            if getattr(call, "function", None) is not None
        )
        reasoning = getattr(message, "reasoning_content", None) or getattr(message, "reasoning", None) or ""
        result = CompletionResult(
            content=(message.content if message is not None else None) or "",
            reasoning=reasoning if isinstance(reasoning, str) else "",
            tool_calls=calls,
            finish_reason=(choice.finish_reason if choice is not None else None)
            or ("tool_calls" if calls else "stop"),
            usage=Usage(estimated=True),
            request_id=getattr(completion, "_request_id", None)
            or completion.id
            or f"req_{uuid.uuid4().hex[:24]}",
            model=completion.model or self.config.request_model,
            response_id=completion.id,
        )
        usage = usage_from(completion.usage)
        return replace(result, usage=usage or _local_usage(messages, tools)(result))


class _Chunks:
    """The chunks of one streamed answer, its request id, and how to let its connection go."""

    def __init__(
        self,
        chunks: AsyncIterator[dict[str, Any]],
        request_id: str | None,
        close: Callable[[], Awaitable[None]],
    ) -> None:
        self._chunks = chunks
        self.request_id = request_id
        self._close = close

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        return self._chunks

    async def aclose(self) -> None:
        aclose = getattr(self._chunks, "aclose", None)
        if aclose is not None:
            await aclose()
        await self._close()


async def _sse_chunks(response: httpx2.Response) -> AsyncIterator[dict[str, Any]]:
    """The JSON objects of an OpenAI-style SSE stream up to ``[DONE]`` (the body read to its end, so the
    connection goes back to the pool); transport failures are reported as the SDK's own stream does."""
    decoder = SSEDecoder()
    pieces = response.aiter_bytes()
    while True:
        try:
            piece = await pieces.__anext__()
        except StopAsyncIteration:
            break
        except httpx2.TimeoutException as exc:
            raise openai.APITimeoutError(response.request) from exc
        except httpx2.TransportError as exc:
            raise openai.APIConnectionError(request=response.request) from exc
        for chunk in decoder.feed(piece):
            yield chunk
    for chunk in decoder.finish():
        yield chunk


def _plain(item: Any) -> Any:
    """Accept OpenAI-format dicts or pydantic models (dumped without ``None`` fields)."""
    if isinstance(item, Mapping):
        return dict(item)
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        return dump(exclude_none=True, by_alias=True)
    return item
