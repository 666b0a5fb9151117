"""The web framework's share of a chat request: pure ASGI, bare FastAPI, FastAPI with Fathom's middleware
and a real Fathom chat, by server CPU time, interleaved.

    .venv/bin/python benchmarks/asgi_floor.py [--rounds 4] [--requests 1000] [--clients 8]

Issue 33 asks, before the chat endpoints leave FastAPI: how much of a Fathom chat's CPU is the framework?
Four contenders, each its own long-lived uvicorn process on a loopback port (h11, as ``fathom serve``),
all parsing the same chat body into the same pydantic model and answering the same chat-shaped JSON body
(or one SSE frame and ``[DONE]`` with ``stream: true``):

- ``pure ASGI``: one ASGI callable, no framework: reads the body, ``model_validate_json``, sends the
  answer (the floor under any framework);
- ``bare FastAPI``: ``benchmarks/api.py``'s bare endpoint (the floor issue 33's ratios are taken to);
- ``FastAPI + Fathom stack``: the same endpoint inside the middleware and error handlers
  ``fathom.server.app.create_app`` installs (CORS, the body-size limit, the error-language middleware,
  Fathom's exception handlers): what every Fathom route pays before its own code;
- ``Fathom start→answer``: a real ``fathom serve`` chat (workflowStart → answerNode, no model: the key
  checked, the app loaded, the workflow run, the turn stored), as in ``benchmarks/api.py``.

Each round runs every contender for ``--requests`` requests from ``--clients`` closed-loop clients, JSON
then SSE, in an order rotated by one each round; what counts is the server process's CPU (utime + stime
from ``/proc``) over its share. The report gives requests per server CPU-second and each contender's
ratio to ``pure ASGI`` and to ``bare FastAPI`` of the same round (min / median / max over the rounds).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from api import (  # noqa: E402
    BARE_ANSWER,
    ChatBody,
    Process,
    Target,
    add_bare_route,
    closed_loop,
    create_published,
    free_port,
    serve_bare,
    spread,
    start_answer_app,
    start_servers,
    wait_http,
)

PURE = "pure ASGI"
BARE = "bare FastAPI"
STACK = "FastAPI + Fathom stack"
FATHOM = "Fathom start→answer"
PATH = "/api/v1/chat/completions"


def serve_pure(port: int) -> None:
    """No framework: one ASGI callable parsing the chat body with the same pydantic model."""
    import uvicorn

    answer = json.dumps(BARE_ANSWER).encode()
    frames = [f"data: {json.dumps(BARE_ANSWER)}\n\n".encode(), b"data: [DONE]\n\n"]

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["method"] != "POST" or scope["path"] != PATH:
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = ChatBody.model_validate_json(b"".join(chunks))
        if not body.stream:
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(answer)).encode())]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": answer})
            return
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream")],
            }
        )
        for frame in frames:
            await send({"type": "http.response.body", "body": frame, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def serve_stack(port: int) -> None:
    """The bare endpoint inside the middleware and exception handlers Fathom's app installs."""
    import uvicorn
    from fastapi import FastAPI
    from fastapi.middleware.cors import CORSMiddleware

    from fathom.config import Settings
    from fathom.server.body_limit import BodySizeLimitMiddleware
    from fathom.server.errors import install_error_handlers

    app = FastAPI()
    install_error_handlers(app)
    app.add_middleware(CORSMiddleware, allow_origins=["*"], allow_methods=["*"], allow_headers=["*"])
    app.add_middleware(BodySizeLimitMiddleware, max_bytes=Settings().max_body_bytes)

    add_bare_route(app)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def contenders() -> tuple[list[Target], list[Process], Any]:
    me = [sys.executable, str(Path(__file__).resolve())]
    servers = start_servers()  # the scripted model, the bare endpoint and `fathom serve`
    processes: list[Process] = []
    try:
        pure_port, stack_port = free_port(), free_port()
        pure = Process([*me, "--serve-pure", str(pure_port)])
        stack = Process([*me, "--serve-stack", str(stack_port)])
        processes += [pure, stack]
        pure_url, stack_url = f"http://127.0.0.1:{pure_port}", f"http://127.0.0.1:{stack_port}"
        probe = {"messages": [{"role": "user", "content": "hello"}]}
        for url in (pure_url, stack_url):
            _wait_post(url + PATH, probe)
        wait_http(servers.bare_url + "/docs")
        app_id = create_published(servers.fathom_url, servers.key, start_answer_app())
        body = {"appId": "x" * 24, "messages": [{"role": "user", "content": "hello"}]}
        auth = {"Authorization": f"Bearer {servers.key}"}
        targets = [
            Target(PURE, pure_url + PATH, body, pure),
            Target(BARE, servers.bare_url + PATH, body, servers.bare),
            Target(STACK, stack_url + PATH, body, stack),
            Target(FATHOM, servers.fathom_url + PATH, {**body, "appId": app_id}, servers.fathom, auth),
        ]
    except BaseException:
        for process in processes:
            process.stop()
        servers.stop()
        raise
    return targets, processes, servers


def _wait_post(url: str, body: dict[str, Any], timeout: float = 60) -> None:
    import time

    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            httpx.post(url, json=body, timeout=1).raise_for_status()
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer")


async def run(targets: list[Target], args: argparse.Namespace) -> dict[str, dict[str, list[float]]]:
    """mode → contender → requests per server CPU-second, one per round."""
    rates: dict[str, dict[str, list[float]]] = {"json": {}, "sse": {}}
    for number in range(args.rounds):
        order = targets[number % len(targets) :] + targets[: number % len(targets)]
        print(f"round {number + 1}: {', '.join(t.name for t in order)}", flush=True)
        for mode in ("json", "sse"):
            for target in order:
                share = await closed_loop(
                    target, stream=mode == "sse", clients=args.clients, requests=args.requests
                )
                if share.errors:
                    raise RuntimeError(f"{target.name}: {share.errors} failed requests")
                rates[mode].setdefault(target.name, []).append(share.per_cpu_second)
                print(f"  {mode:4} {target.name:24} {share.per_cpu_second:7.0f} req/CPU-s", flush=True)
    return rates


def report(rates: dict[str, dict[str, list[float]]]) -> None:
    print()
    print("| contender | mode | req per server CPU-s (median) | ratio to pure ASGI | ratio to bare FastAPI |")
    print("|---|---|---:|---|---|")
    for mode, by_name in rates.items():
        for name, values in by_name.items():
            to_pure = [v / p for v, p in zip(values, by_name[PURE], strict=True)]
            to_bare = [v / b for v, b in zip(values, by_name[BARE], strict=True)]
            median = statistics.median(values)
            print(f"| {name} | {mode} | {median:,.0f} | {spread(to_pure)} | {spread(to_bare)} |")
    load = os.getloadavg()[0]
    print(f"\nmachine: {os.cpu_count()} CPUs, load average {load:.1f}, Python {platform.python_version()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--requests", type=int, default=1000, help="per contender, mode and round")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--serve-pure", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--serve-stack", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--serve-bare", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_pure:
        return serve_pure(args.serve_pure)
    if args.serve_stack:
        return serve_stack(args.serve_stack)
    if args.serve_bare:
        return serve_bare(args.serve_bare)
    targets, processes, servers = contenders()
    try:
        report(asyncio.run(run(targets, args)))
    finally:
        for process in processes:
            process.stop()
        servers.stop()


if __name__ == "__main__":
    main()
