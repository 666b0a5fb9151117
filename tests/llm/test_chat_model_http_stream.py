"""The lean streaming client of OpenAIChatModel against plain loopback HTTP servers: kept-alive connections
reused, every body framing a server may choose, a connection the server dropped replaced, and an endpoint
behind a proxy from the environment reached through it (by the SDK)."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest

from fathom.llm import ModelConfig, ModelRequestError, OpenAIChatModel
from fathom.testing import ScriptedOpenAIServer, text_turn
from loopback_servers import QuietHandler, serve_on_loopback

USER = [{"role": "user", "content": "hi"}]


def sse_body(*words: str) -> bytes:
    chunks = [
        {"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {"content": word}}]} for word in words
    ]
    chunks.append({"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    text = "".join(f"data: {json.dumps(chunk)}\r\n\r\n" for chunk in chunks) + "data: [DONE]\r\n\r\n"
    return text.encode()


class SSEHandler(QuietHandler):
    """Answers every POST with the same SSE body, framed as ``framing`` says; records client ports."""

    protocol_version = "HTTP/1.1"
    framing: ClassVar[str] = "chunked"
    ports: ClassVar[list[int]] = []
    close_after: ClassVar[bool] = False

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        type(self).ports.append(self.client_address[1])
        body = sse_body("one ", "two")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        if self.framing == "chunked":
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for piece in (body[:7], body[7:50], body[50:]):  # pieces that split lines and events
                self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
        elif self.framing == "length":
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        else:  # the body ends when the connection does
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)
            self.close_connection = True
        if self.close_after:
            self.close_connection = True  # the connection goes although the answer said keep-alive


def handler(framing: str, *, close_after: bool = False) -> type[SSEHandler]:
    return type("Handler", (SSEHandler,), {"framing": framing, "ports": [], "close_after": close_after})


def model_at(base_url: str, **config: Any) -> OpenAIChatModel:
    return OpenAIChatModel(ModelConfig.model_validate({"id": "m", "base_url": base_url, **config}))


@pytest.mark.parametrize("framing", ["chunked", "length", "close"])
async def test_every_body_framing_streams_the_same_answer(framing: str) -> None:
    with serve_on_loopback(handler(framing)) as url:
        model = model_at(f"{url}/v1")
        first = await model.stream(USER).collect()
        second = await model.stream(USER).collect()
        await model.aclose()
    assert first.content == second.content == "one two"
    assert first.finish_reason == "stop" and first.response_id == "c1"


async def test_a_kept_alive_connection_serves_the_next_stream() -> None:
    served = handler("chunked")
    with serve_on_loopback(served) as url:
        model = model_at(f"{url}/v1")
        for _ in range(3):
            assert (await model.stream(USER).collect()).content == "one two"
        await model.aclose()
    assert len(served.ports) == 3 and len(set(served.ports)) == 1


async def test_a_connection_the_server_dropped_is_replaced() -> None:
    served = handler("chunked", close_after=True)
    with serve_on_loopback(served) as url:
        model = model_at(f"{url}/v1", max_retries=0)
        for _ in range(3):
            assert (await model.stream(USER).collect()).content == "one two"
        await model.aclose()
    assert len(set(served.ports)) == 3


async def test_an_error_body_that_is_not_json_is_the_message() -> None:
    class Broken(QuietHandler):
        def do_POST(self) -> None:
            self.send_body(503, b"upstream is restarting")

    with serve_on_loopback(Broken) as url:
        model = model_at(f"{url}/v1", max_retries=0)
        with pytest.raises(ModelRequestError) as info:
            await model.stream(USER).collect()
        await model.aclose()
    assert str(info.value) == "model 'm' request failed with HTTP 503: upstream is restarting"
    assert info.value.status_code == 503 and info.value.retryable is True


@pytest.fixture
def scripted() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as running:
        yield running


async def test_an_endpoint_behind_a_proxy_is_reached_through_the_proxy(
    scripted: ScriptedOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    proxied: list[str] = []
    upstream = scripted.base_url.removesuffix("/v1")

    class Proxy(QuietHandler):
        def do_POST(self) -> None:  # a forward proxy: the request line holds the whole URL
            proxied.append(self.path)
            path = "/" + self.path.split("/", 3)[3]
            body = self.rfile.read(int(self.headers["Content-Length"]))
            request = urllib.request.Request(upstream + path, data=body, method="POST")
            request.add_header("Content-Type", "application/json")
            direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
            with direct.open(request) as answer:
                self.send_body(answer.status, answer.read(), answer.headers["Content-Type"])

    scripted.add_turns(text_turn("through the proxy"))
    with serve_on_loopback(Proxy) as proxy_url:
        for name in ("HTTP_PROXY", "http_proxy"):
            monkeypatch.setenv(name, proxy_url)
        for name in ("NO_PROXY", "no_proxy"):
            monkeypatch.delenv(name, raising=False)
        model = model_at("http://model.invalid/v1")
        result = await model.stream(USER).collect()
        await model.aclose()
    assert result.content == "through the proxy"
    assert proxied == ["http://model.invalid/v1/chat/completions"]


class BigHandler(QuietHandler):
    """Answers with a large SSE body (chunked or length-framed) at once, and records what it was sent."""

    protocol_version = "HTTP/1.1"
    framing: ClassVar[str] = "chunked"
    words: ClassVar[list[str]] = [f"{n:06d}" + "x" * 200 + " " for n in range(3_000)]  # ~620 KB of SSE
    ports: ClassVar[list[int]] = []
    received: ClassVar[list[int]] = []

    def do_POST(self) -> None:
        body_in = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).received.append(len(json.loads(body_in)["messages"][0]["content"]))
        type(self).ports.append(self.client_address[1])
        body = sse_body(*self.words)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        if self.framing == "chunked":
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for start in range(0, len(body), 50_000):
                piece = body[start : start + 50_000]
                self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
        else:
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)


@pytest.mark.parametrize("framing", ["chunked", "length"])
async def test_a_large_answer_read_slower_than_it_arrives_comes_whole_and_the_connection_serves_again(
    framing: str,
) -> None:
    served = type("Big", (BigHandler,), {"framing": framing, "ports": [], "received": []})
    with serve_on_loopback(served) as url:
        model = model_at(f"{url}/v1")
        for _ in range(2):
            parts: list[str] = []
            async with model.stream(USER) as stream:
                async for event in stream:
                    if not parts:
                        await asyncio.sleep(0.3)  # the whole answer arrives meanwhile: the socket is paused
                    text = getattr(event, "text", None)
                    if isinstance(text, str):
                        parts.append(text)
            assert stream.result is not None and stream.result.content == "".join(BigHandler.words)
        await model.aclose()
    assert len(served.ports) == 2 and len(set(served.ports)) == 1


async def test_a_request_larger_than_the_socket_buffers_goes_out_whole() -> None:
    served = type("Big", (BigHandler,), {"framing": "length", "ports": [], "received": []})
    prompt = "y" * 8_000_000
    with serve_on_loopback(served) as url:
        model = model_at(f"{url}/v1")
        result = await model.stream([{"role": "user", "content": prompt}]).collect()
        await model.aclose()
    assert served.received == [len(prompt)]
    assert result.content == "".join(BigHandler.words)
