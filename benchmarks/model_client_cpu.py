"""Client CPU per streamed chat completion, three ways (issue #29, item 4: one model client path?).

Against the scripted OpenAI-compatible server (its own thread), the client's event-loop thread CPU
(``time.thread_time``) per streamed completion, interleaved rounds, median of rounds:

* ``lean``   — Fathom's product path: ``OpenAIChatModel.stream`` over ``fathom.llm.http_stream``;
* ``sdk``    — the same model with an ``AsyncOpenAI`` client passed in (the SDK over its httpx);
* ``h11``    — the product path with ``benchmarks/h11_stream.py`` in place of ``http_stream`` (the same
  client with h11 doing the HTTP/1.1 framing: what a maintained framing library costs);
* ``httpx``  — a lean httpx path: ``httpx.AsyncClient.stream`` + ``aiter_lines`` + one ``json.loads``
  per ``data:`` line, no SDK (what "one path on a maintained library" would at best cost).

aiohttp is not installed in this environment, so it is not measured.

Usage: ``python benchmarks/model_client_cpu.py [--chunks 200] [--requests 200] [--rounds 5]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Awaitable, Callable

import h11_stream
import httpx

from fathom.llm import ModelConfig, OpenAIChatModel
from fathom.llm.openai_client import make_openai_client, ssl_context
from fathom.testing import ScriptedOpenAIServer
from fathom.testing.scripted_turns import text_turn

MESSAGES = [{"role": "user", "content": "hello"}]


async def _lean(model: OpenAIChatModel) -> int:
    events = 0
    async with model.stream(MESSAGES) as stream:
        async for _ in stream:
            events += 1
    return events


async def _httpx(client: httpx.AsyncClient, model_name: str) -> int:
    events = 0
    body = {"model": model_name, "messages": MESSAGES, "stream": True}
    async with client.stream("POST", "/chat/completions", json=body) as response:
        response.raise_for_status()
        async for line in response.aiter_lines():
            if line.startswith("data:"):
                data = line[5:].strip()
                if data == "[DONE]":
                    break
                json.loads(data)
                events += 1
    return events


async def _measure(call: Callable[[], Awaitable[int]], requests: int) -> float:
    await call()  # warm: connection made, code paths loaded
    started = time.thread_time()
    for _ in range(requests):
        await call()
    return (time.thread_time() - started) / requests * 1e6


async def main(chunks: int, requests: int, rounds: int) -> None:
    content = "x" * chunks
    with ScriptedOpenAIServer(lambda request: text_turn(content, text_chunk_chars=1)) as server:
        config = ModelConfig.model_validate({"id": "m", "base_url": server.base_url})
        lean = OpenAIChatModel(config)
        sdk = OpenAIChatModel(config, client=make_openai_client(config))
        framed = OpenAIChatModel(config)
        framed._endpoint = h11_stream.StreamingEndpoint(  # type: ignore[assignment]
            config.base_url,
            headers={"Authorization": "Bearer EMPTY"},
            connect_timeout=config.connect_timeout,
            read_timeout=config.timeout,
            ssl_context=ssl_context,
        )
        raw = httpx.AsyncClient(base_url=server.base_url, headers={"Authorization": "Bearer EMPTY"})
        ways: dict[str, Callable[[], Awaitable[int]]] = {
            "lean": lambda: _lean(lean),
            "sdk": lambda: _lean(sdk),
            "h11": lambda: _lean(framed),
            "httpx": lambda: _httpx(raw, "m"),
        }
        results: dict[str, list[float]] = {name: [] for name in ways}
        for _ in range(rounds):
            for name, call in ways.items():
                results[name].append(await _measure(call, requests))
        await lean.aclose()
        await sdk.aclose()
        await framed.aclose()
        await raw.aclose()
    base = statistics.median(results["lean"])
    print(f"{chunks} chunks per completion, {requests} completions x {rounds} rounds (client thread CPU)")
    for name, values in results.items():
        median = statistics.median(values)
        print(f"  {name:6} {median:8.0f} µs per completion  ({median / base:.2f}x lean)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=200)
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(main(args.chunks, args.requests, args.rounds))
