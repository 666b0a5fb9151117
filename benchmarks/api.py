"""Chat serving cost: Fathom against a bare FastAPI endpoint, by server CPU time, interleaved.

    .venv/bin/python benchmarks/api.py [--rounds 3] [--requests 300] [--clients 8] [--streams 100]

Every contender is its own long-lived server process on a loopback port, started once: the bare
endpoint (FastAPI + uvicorn, parsing the same chat body into a pydantic model and answering a fixed
chat-shaped JSON body, or one SSE frame and ``[DONE]`` when ``stream`` is set: the framework's floor),
one ``fathom serve`` (fresh SQLite data dir, no job workers) and the scripted OpenAI-compatible model
server (a fixed short answer, no delay; its own process, so its CPU is not Fathom's).

Targets on the Fathom server: ``start→answer`` (a workflowStart → answerNode app: no model),
``chat app`` (a simple app against the scripted model) and ``continued chat`` (the same app, each request
sent with the ``chatId`` of a chat that already has 20 turns, so its history is read and handed to the
model: the console's normal case; each concurrent client continues its own chat, seeded through the chat
API before the rounds, and the chats grow by one turn per request). Every Fathom request is a real chat:
authenticated, the published version loaded, the workflow run, the turn stored (under a new chat, or
appended to the continued one). ``first turn, chatId``: the chat app, each request a new chat under a
``chatId`` the client chose (the console's first turn of every chat; an OpenAI client keeping its ids).

Each round runs, for each mode (``json``, ``sse``), every target for ``--requests`` requests from
``--clients`` closed-loop clients, in an order rotated by one each round, so that load from other
processes hits every contender alike. What counts is the CPU time the server process spent (utime +
stime from ``/proc/<pid>/stat``) during the contender's share: requests per server CPU-second. Per
round, each Fathom target's figure is divided by the bare endpoint's of the same round and mode; the
report gives min / median / max of those ratios over the rounds. Each round then measures time to
first event (``--ttfe`` sequential streams per target: request sent → first complete SSE frame) and
``--streams`` concurrent streams started at once (p50 of the whole stream and of the first event).
The load generator shares the machine: compare ratios and CPU figures, not wall-clock ones.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from pydantic import BaseModel

MODEL = "scripted-chat"
ANSWER = "Fathom answers from the scripted model."
BARE = "bare FastAPI"
NO_MODEL = "start→answer"
CHAT_APP = "chat app"
CONTINUED = "continued chat"
FIRST_TURN = "first turn, chatId"  # a new chat under a chatId the client chose: the console's first turn
MODEL_ALONE = "model alone"  # the scripted model server asked directly: time to first event only
PRIOR_TURNS = 20  # turns each continued chat has before the measured requests
TARGETS = (BARE, NO_MODEL, CHAT_APP, CONTINUED, FIRST_TURN)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- the helper processes ------------------------------------------------------------------------


def serve_model(port: int, delay_ms: float = 0.0) -> None:
    """The scripted model server: the same short streamed answer to every chat request (``delay_ms``
    slept before each chunk: a model that makes its client wait without taking the machine's CPU)."""
    import threading

    from fathom.testing import ScriptedOpenAIServer, text_turn

    turn = text_turn(ANSWER, delay=delay_ms / 1000)
    with ScriptedOpenAIServer(lambda _: turn, model=MODEL, port=port):
        print("ready", flush=True)
        threading.Event().wait()


class ChatBody(BaseModel):
    """The chat request body as the bare endpoint parses it."""

    appId: str | None = None
    chatId: str | None = None
    stream: bool = False
    detail: bool = False
    messages: list[dict[str, Any]] = []
    variables: dict[str, Any] | None = None


def serve_bare(port: int) -> None:
    """The framework's floor: FastAPI + uvicorn parsing the chat body, answering JSON or one SSE frame."""
    import uvicorn
    from fastapi import FastAPI

    app = FastAPI()
    add_bare_route(app)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


BARE_ANSWER = {"id": "", "model": "", "choices": [{"message": {"role": "assistant", "content": ANSWER}}]}


def add_bare_route(app: Any) -> None:
    """The bare chat endpoint on a FastAPI ``app``: the chat body parsed, a fixed answer (JSON, or one
    SSE frame and ``[DONE]`` with ``stream``)."""
    from fastapi.responses import StreamingResponse

    @app.post("/api/v1/chat/completions", response_model=None)
    async def bare(body: ChatBody) -> dict[str, Any] | StreamingResponse:
        if not body.stream:
            return BARE_ANSWER

        async def frames() -> Any:
            yield f"data: {json.dumps(BARE_ANSWER)}\n\n"
            yield "data: [DONE]\n\n"

        return StreamingResponse(frames(), media_type="text/event-stream")


class Process:
    def __init__(self, args: list[str], env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            args, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )
        self.lines: list[str] = []

    def read_until(self, prefix: str, timeout: float = 90) -> None:
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))
            if line.strip().startswith(prefix):
                return
            if time.monotonic() > deadline:
                break
        raise RuntimeError(f"no line {prefix!r}: {self.lines}")

    def cpu_seconds(self) -> float:
        """utime + stime of the server process (its threads included)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def wait_http(url: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer")


# -- load ----------------------------------------------------------------------------------------


@dataclass
class Target:
    name: str
    url: str
    body: dict[str, Any]
    server: Process
    headers: dict[str, str] = field(default_factory=dict)
    chat_ids: list[str] = field(default_factory=list)  # continued chats: one per concurrent client
    new_chat_ids: bool = False  # each request a new chat under a chatId of its own (the console's first turn)

    def body_for(self, client: int, stream: bool) -> dict[str, Any]:
        """The request body of concurrent client ``client`` (its own chat, so no two runs share one)."""
        body = {**self.body, "stream": True} if stream else self.body
        if self.chat_ids:
            body = {**body, "chatId": self.chat_ids[client % len(self.chat_ids)]}
        elif self.new_chat_ids:
            body = {**body, "chatId": f"bench-new-{uuid.uuid4().hex}"}
        return body


@dataclass
class Share:
    """One contender's share of a round: requests, server CPU, latencies (s)."""

    requests: int
    errors: int
    wall: float
    cpu: float
    first: list[float]
    total: list[float]

    @property
    def per_cpu_second(self) -> float:
        return self.requests / self.cpu if self.cpu > 0 else float("nan")


async def one_request(
    client: httpx.AsyncClient, target: Target, stream: bool, slot: int = 0
) -> tuple[float, float]:
    """(seconds to the first complete SSE frame or the whole answer, seconds to the end); ``slot``: which
    concurrent client sends it."""
    started = time.perf_counter()
    body = target.body_for(slot, stream)
    if not stream:
        response = await client.post(target.url, json=body, headers=target.headers)
        response.raise_for_status()
        if "choices" not in response.json():
            raise RuntimeError(response.text[:200])
        done = time.perf_counter() - started
        return done, done
    first: float | None = None
    buffer = ""
    async with client.stream("POST", target.url, json=body, headers=target.headers) as response:
        response.raise_for_status()
        async for chunk in response.aiter_text():
            buffer += chunk
            if first is None and "\n\n" in buffer:
                first = time.perf_counter() - started
    if first is None or "[DONE]" not in buffer:
        raise RuntimeError(f"incomplete stream: {buffer[:200]}")
    return first, time.perf_counter() - started


async def closed_loop(target: Target, *, stream: bool, clients: int, requests: int) -> Share:
    """``requests`` requests from ``clients`` closed-loop clients; the server's CPU over the share."""
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(limits=limits, timeout=120) as client:
        for slot in range(min(clients, 4)):  # connections up, caches warm
            await one_request(client, target, stream, slot)
        first: list[float] = []
        total: list[float] = []
        errors = 0
        left = requests

        async def worker(slot: int) -> None:
            nonlocal errors, left
            while left > 0:
                left -= 1
                try:
                    a, b = await one_request(client, target, stream, slot)
                    first.append(a)
                    total.append(b)
                except Exception:
                    errors += 1

        cpu_before = target.server.cpu_seconds()
        started = time.perf_counter()
        await asyncio.gather(*(worker(slot) for slot in range(clients)))
        wall = time.perf_counter() - started
        cpu = target.server.cpu_seconds() - cpu_before
    return Share(len(total), errors, wall, cpu, first, total)


async def burst(target: Target, streams: int) -> Share:
    """``streams`` streams started at once, each on its own connection."""
    limits = httpx.Limits(max_connections=streams, max_keepalive_connections=streams)
    async with httpx.AsyncClient(limits=limits, timeout=120) as client:
        await one_request(client, target, True)
        cpu_before = target.server.cpu_seconds()
        started = time.perf_counter()
        results = await asyncio.gather(
            *(one_request(client, target, True, slot) for slot in range(streams)), return_exceptions=True
        )
        wall = time.perf_counter() - started
        cpu = target.server.cpu_seconds() - cpu_before
    good = [r for r in results if isinstance(r, tuple)]
    return Share(len(good), len(results) - len(good), wall, cpu, [r[0] for r in good], [r[1] for r in good])


def p50_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000 if values else float("nan")


def spread(values: list[float]) -> str:
    if not values:
        return "-"
    return f"{min(values):.3f} / {statistics.median(values):.3f} / {max(values):.3f}"


# -- setup ---------------------------------------------------------------------------------------


def start_answer_app() -> dict[str, Any]:
    def io(key: str, value: Any) -> dict[str, Any]:
        return {"key": key, "value": value, "valueType": "any", "renderTypeList": ["input"], "label": key}

    start = {
        "nodeId": "start",
        "name": "start",
        "flowNodeType": "workflowStart",
        "inputs": [io("userChatInput", "")],
        "outputs": [{"id": "userChatInput", "key": "userChatInput", "type": "static", "valueType": "string"}],
    }
    answer = {
        "nodeId": "reply",
        "name": "reply",
        "flowNodeType": "answerNode",
        "inputs": [io("text", "You said: {{$start.userChatInput$}}")],
        "outputs": [],
    }
    edge = {"source": "start", "target": "reply", "sourceHandle": "start-source-right"}
    return {
        "name": "start-answer",
        "type": "advanced",
        "nodes": [start, answer],
        "edges": [{**edge, "targetHandle": "reply-target-left"}],
    }


def chat_app() -> dict[str, Any]:
    return {"name": "chat", "type": "simple", "simpleConfig": {"model": MODEL, "systemPrompt": "Be brief."}}


def create_published(base_url: str, key: str, body: dict[str, Any]) -> str:
    """Create the app (create publishes its first version, as FastGPT's does)."""
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=base_url, headers=headers, timeout=30) as client:
        reply = client.post("/api/core/app/create", json=body).json()
        return str(reply["data"])


@dataclass
class Servers:
    model: Process
    bare: Process
    fathom: Process
    bare_url: str
    fathom_url: str
    key: str
    data_dir: Path
    model_url: str = ""  # the scripted model server's OpenAI base URL (``…/v1``)

    def stop(self) -> None:
        for process in (self.fathom, self.bare, self.model):
            process.stop()
        shutil.rmtree(self.data_dir, ignore_errors=True)


def start_servers(database_url: str | None = None, model_delay_ms: float = 0.0) -> Servers:
    """The scripted model (``model_delay_ms`` before each chunk), the bare endpoint and ``fathom serve``
    (on a fresh SQLite data dir, or on ``database_url``: a PostgreSQL database of its own)."""
    me = [sys.executable, str(Path(__file__).resolve())]
    model_port, bare_port, fathom_port = free_port(), free_port(), free_port()
    data_dir = Path(tempfile.mkdtemp(prefix="fathom-bench-api-"))
    model = Process([*me, "--serve-model", str(model_port), "--model-delay-ms", str(model_delay_ms)])
    bare = Process([*me, "--serve-bare", str(bare_port)])
    env = {k: v for k, v in os.environ.items() if not k.startswith("FATHOM_")}
    env.update(
        {
            "FATHOM_DATA_DIR": str(data_dir),
            "FATHOM_PORT": str(fathom_port),
            "FATHOM_WORKERS": "0",
            "FATHOM_SEED_DEMO": "false",
            "FATHOM_LOG_LEVEL": "warning",
            "FATHOM_OPENAI_BASE_URL": f"http://127.0.0.1:{model_port}/v1",
            "FATHOM_CHAT_MODEL": MODEL,
        }
    )
    if database_url is not None:
        env["FATHOM_DATABASE_URL"] = database_url
    fathom = Process([sys.executable, "-m", "fathom", "serve"], env=env)
    bare_url, fathom_url = f"http://127.0.0.1:{bare_port}", f"http://127.0.0.1:{fathom_port}"
    model_url = f"http://127.0.0.1:{model_port}/v1"
    servers = Servers(model, bare, fathom, bare_url, fathom_url, "", data_dir, model_url)
    try:
        model.read_until("ready")
        fathom.read_until("Fathom ")
        # the first start's credentials box: "│ API key   fathom-… │"
        pattern = re.compile(r"fathom-[A-Za-z0-9_-]{20,}")
        servers.key = next(m.group(0) for line in fathom.lines if (m := pattern.search(line)))
        wait_http(f"{fathom_url}/api/health")
        wait_http(f"{bare_url}/docs")
    except BaseException:
        servers.stop()  # no server outlives a failed start
        raise
    return servers


def start_servers_with(
    env: dict[str, str], database_url: str | None = None, model_delay_ms: float = 0.0
) -> Servers:
    """``start_servers`` with ``env`` added to this process's environment while they start (e.g. another
    checkout's ``PYTHONPATH``: the servers run that code)."""
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        return start_servers(database_url, model_delay_ms)
    finally:
        os.environ.clear()
        os.environ.update(saved)


async def seed_chats(url: str, headers: dict[str, str], app_id: str, chats: int, turns: int) -> list[str]:
    """``chats`` chats of ``app_id`` with ``turns`` turns each, sent through the chat API as a user would."""
    chat_ids = [f"bench-continued-{n:03d}" for n in range(chats)]
    limits = httpx.Limits(max_connections=16, max_keepalive_connections=16)
    async with httpx.AsyncClient(limits=limits, timeout=120, headers=headers) as client:

        async def one_chat(chat_id: str) -> None:
            for turn in range(turns):
                body = {
                    "appId": app_id,
                    "chatId": chat_id,
                    "messages": [{"role": "user", "content": f"q{turn}"}],
                }
                response = await client.post(url, json=body)
                response.raise_for_status()

        await asyncio.gather(*(one_chat(chat_id) for chat_id in chat_ids))
    return chat_ids


def model_target(servers: Servers) -> Target:
    """The scripted model server itself, asked what the chat app asks it (its own time to first frame)."""
    url = servers.model_url + "/chat/completions"
    body = {"model": MODEL, "messages": [{"role": "user", "content": "hello"}]}
    return Target(MODEL_ALONE, url, body, servers.model)


def targets_of(servers: Servers, args: argparse.Namespace) -> list[Target]:
    messages = [{"role": "user", "content": "hello"}]
    auth = {"Authorization": f"Bearer {servers.key}"}
    path = "/api/v1/chat/completions"
    no_model = create_published(servers.fathom_url, servers.key, start_answer_app())
    chat = create_published(servers.fathom_url, servers.key, chat_app())
    return [
        Target(BARE, servers.bare_url + path, {"appId": "x" * 24, "messages": messages}, servers.bare),
        Target(
            NO_MODEL,
            servers.fathom_url + path,
            {"appId": no_model, "messages": messages},
            servers.fathom,
            auth,
        ),
        Target(
            CHAT_APP, servers.fathom_url + path, {"appId": chat, "messages": messages}, servers.fathom, auth
        ),
        Target(
            CONTINUED,
            servers.fathom_url + path,
            {"appId": chat, "messages": messages},
            servers.fathom,
            auth,
            chat_ids=asyncio.run(
                seed_chats(
                    servers.fathom_url + path, auth, chat, max(args.clients, args.streams), PRIOR_TURNS
                )
            ),
        ),
        Target(
            FIRST_TURN,
            servers.fathom_url + path,
            {"appId": chat, "messages": messages},
            servers.fathom,
            auth,
            new_chat_ids=True,
        ),
    ]


# -- the run -------------------------------------------------------------------------------------


Results = dict[str, dict[str, list[Share]]]  # phase → target → one share per round


async def run_rounds(
    targets: list[Target], args: argparse.Namespace, model_alone: Target | None = None
) -> Results:
    """Every round: JSON and SSE closed loops, time to first event (``model_alone`` too, when given:
    the model's own share of a chat app's first event), a burst of streams."""
    results: Results = {}

    def keep(phase: str, name: str, share: Share) -> None:
        results.setdefault(phase, {}).setdefault(name, []).append(share)
        print(
            f"  {phase:6} {name:18} {share.requests:5} req {share.per_cpu_second:7.0f} req/CPU-s "
            f"first p50 {p50_ms(share.first):8.1f} ms  end p50 {p50_ms(share.total):8.1f} ms "
            f"errors {share.errors}",
            flush=True,
        )

    for number in range(args.rounds):
        order = targets[number % len(targets) :] + targets[: number % len(targets)]
        print(f"round {number + 1}: {', '.join(t.name for t in order)}", flush=True)
        for mode in ("json", "sse"):
            for target in order:
                share = await closed_loop(
                    target, stream=mode == "sse", clients=args.clients, requests=args.requests
                )
                keep(mode, target.name, share)
        for target in [*order, model_alone] if model_alone is not None else order:
            keep("ttfe", target.name, await closed_loop(target, stream=True, clients=1, requests=args.ttfe))
        for target in order:
            keep("burst", target.name, await burst(target, args.streams))
    return results


def report(results: Results, args: argparse.Namespace, servers: Servers) -> dict[str, Any]:
    summary: dict[str, Any] = {"rounds": args.rounds, "ratios": {}, "ttfe_p50_ms": {}, "burst": {}}
    print()
    print("| target | mode | req per server CPU-s (median) | ratio to bare, min / median / max |")
    print("|---|---|---:|---|")
    for mode in ("json", "sse"):
        bare = results[mode][BARE]
        for name in TARGETS:
            shares = results[mode][name]
            ratios = [s.per_cpu_second / b.per_cpu_second for s, b in zip(shares, bare, strict=True)]
            median = statistics.median(s.per_cpu_second for s in shares)
            summary["ratios"][f"{name} {mode}"] = ratios
            print(f"| {name} | {mode} | {median:.0f} | {spread(ratios) if name != BARE else '1'} |")
    print()
    print(f"{CONTINUED} ({PRIOR_TURNS}+ prior turns) against a new chat of the same app, per round:")
    for mode in ("json", "sse"):
        pairs = zip(results[mode][CONTINUED], results[mode][CHAT_APP], strict=True)
        ratios = [c.per_cpu_second / n.per_cpu_second for c, n in pairs]
        summary["ratios"][f"{CONTINUED} / {CHAT_APP} {mode}"] = ratios
        print(f"  {mode}: min / median / max {spread(ratios)}")
    print()
    print(
        f"| target | TTFE p50 ms, 1 client (per round) | {args.streams} streams at once: end p50 ms "
        "| first event p50 ms |"
    )
    print("|---|---|---|---|")
    for name in TARGETS:
        ttfe = [p50_ms(s.first) for s in results["ttfe"][name]]
        ends = [p50_ms(s.total) for s in results["burst"][name]]
        firsts = [p50_ms(s.first) for s in results["burst"][name]]
        summary["ttfe_p50_ms"][name] = ttfe
        summary["burst"][name] = {"end_p50_ms": ends, "first_p50_ms": firsts}
        print(
            f"| {name} | {' / '.join(f'{v:.1f}' for v in ttfe)} | {' / '.join(f'{v:.0f}' for v in ends)} "
            f"| {' / '.join(f'{v:.0f}' for v in firsts)} |"
        )
    if MODEL_ALONE in results["ttfe"]:
        # issue 33's row: the chat app's first event beside the bare endpoint's, and beside the scripted
        # model's own (a chat app's first event waits for its model; a bare endpoint has none)
        model = [p50_ms(s.first) for s in results["ttfe"][MODEL_ALONE]]
        summary["ttfe_p50_ms"][MODEL_ALONE] = model
        print(f"| {MODEL_ALONE} | {' / '.join(f'{v:.1f}' for v in model)} | | |")
        for name in (CHAT_APP, CONTINUED, FIRST_TURN):
            ttfe = summary["ttfe_p50_ms"][name]
            minus_bare = [t - b for t, b in zip(ttfe, summary["ttfe_p50_ms"][BARE], strict=True)]
            minus_model = [t - m for t, m in zip(ttfe, model, strict=True)]
            summary["ttfe_p50_ms"][f"{name} minus bare"] = minus_bare
            summary["ttfe_p50_ms"][f"{name} minus model alone"] = minus_model
            print(
                f"{name}: TTFE p50 minus bare {spread(minus_bare)} ms, minus the model alone "
                f"{spread(minus_model)} ms (min / median / max of rounds)"
            )
    errors = sum(s.errors for phase in results.values() for shares in phase.values() for s in shares)
    summary["errors"] = errors
    summary["fathom_rss_mb"] = servers.fathom.rss_mb()
    print(f"\nerrors: {errors}; Fathom RSS after the run: {summary['fathom_rss_mb']:.0f} MB")
    print(
        f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}, "
        f"Python {platform.python_version()}"
    )
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=300, help="per target, mode and round")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--ttfe", type=int, default=100, help="sequential streams per target and round")
    parser.add_argument("--streams", type=int, default=100, help="concurrent streams per target and round")
    parser.add_argument("--json", type=Path, help="also write the summary here")
    parser.add_argument("--serve-model", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--model-delay-ms", type=float, default=0.0, help="slept before each model chunk")
    parser.add_argument("--serve-bare", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_model:
        return serve_model(args.serve_model, args.model_delay_ms)
    if args.serve_bare:
        return serve_bare(args.serve_bare)
    servers = start_servers(model_delay_ms=args.model_delay_ms)
    try:
        results = asyncio.run(run_rounds(targets_of(servers, args), args, model_target(servers)))
        summary = report(results, args, servers)
        if args.json:
            args.json.write_text(json.dumps(summary, indent=1))
    finally:
        servers.stop()


if __name__ == "__main__":
    main()
