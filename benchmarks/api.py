"""HTTP API throughput and SSE time-to-first-event, against a bare FastAPI endpoint in the same run.

    .venv/bin/python benchmarks/api.py [--seconds 3] [--concurrency 1 10 100]

Starts, each as its own process on a loopback port: the scripted OpenAI-compatible model server (a
fixed short answer, no delay), one ``fathom serve`` (fresh SQLite data dir, no job workers) and a bare
FastAPI app served by uvicorn the same way (one JSON endpoint and one SSE endpoint: the framework's
floor). Then, for each target (bare; a start → answer workflow app; a simple chat app against the
scripted model) and each number of concurrent clients, it runs closed-loop clients for ``--seconds``:
non-stream requests (requests/s, latency p50) and ``stream=true`` requests (requests/s,
time-to-first-event p50/p95: request sent → first complete SSE frame). The server's own CPU time
(utime + stime from /proc) gives requests per CPU-second, the "per core" number.

Every Fathom request is a real chat: authenticated, the published version loaded, the workflow run,
the turn stored (a new chat each time). The load generator runs on the same machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

MODEL = "scripted-chat"
ANSWER = "Fathom answers from the scripted model."


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- the helper processes ------------------------------------------------------------------------


def serve_model(port: int) -> None:
    """The scripted model server: the same short streamed answer to every chat request."""
    import threading

    from fathom.testing import ScriptedOpenAIServer, text_turn

    with ScriptedOpenAIServer(lambda _: text_turn(ANSWER), model=MODEL, port=port):
        print("ready", flush=True)
        threading.Event().wait()


def serve_bare(port: int) -> None:
    """The framework's floor: FastAPI + uvicorn answering a fixed chat-shaped body, or one SSE frame."""
    import uvicorn
    from fastapi import FastAPI
    from fastapi.responses import StreamingResponse

    app = FastAPI()
    body = {"id": "", "model": "", "choices": [{"message": {"role": "assistant", "content": ANSWER}}]}

    @app.post("/bare")
    async def bare() -> dict[str, Any]:
        return body

    @app.post("/bare/stream")
    async def bare_stream() -> StreamingResponse:
        async def frames() -> Any:
            yield f"data: {json.dumps(body)}\n\n"
            yield "data: [DONE]\n\n"

        return StreamingResponse(frames(), media_type="text/event-stream")

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


class Process:
    def __init__(self, args: list[str], env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            args, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )
        self.lines: list[str] = []

    def read_until(self, prefix: str, timeout: float = 60) -> None:
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
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

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
    headers: dict[str, str] = field(default_factory=dict)
    stream_url: str | None = None  # bare: a separate endpoint


@dataclass
class Result:
    target: str
    mode: str
    concurrency: int
    requests: int
    errors: int
    seconds: float
    cpu_seconds: float
    latencies: list[float]

    @property
    def rps(self) -> float:
        return self.requests / self.seconds

    @property
    def per_cpu_second(self) -> float:
        return self.requests / self.cpu_seconds if self.cpu_seconds else float("nan")

    def pct(self, q: float) -> float:
        if not self.latencies:
            return float("nan")
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def one_request(client: httpx.AsyncClient, target: Target, stream: bool) -> float:
    """Seconds until the answer (non-stream) or until the first complete SSE frame (stream)."""
    started = time.perf_counter()
    if not stream:
        response = await client.post(target.url, json=target.body, headers=target.headers)
        response.raise_for_status()
        if "error" in response.json():
            raise RuntimeError(response.text[:200])
        return time.perf_counter() - started
    url = target.stream_url or target.url
    body = target.body if target.stream_url else {**target.body, "stream": True}
    first: float | None = None
    buffer = ""
    async with client.stream("POST", url, json=body, headers=target.headers) as response:
        response.raise_for_status()
        async for chunk in response.aiter_text():
            buffer += chunk
            if first is None and "\n\n" in buffer:
                first = time.perf_counter() - started
    if first is None or "[DONE]" not in buffer:
        raise RuntimeError(f"incomplete stream: {buffer[:200]}")
    return first


async def load(target: Target, *, stream: bool, concurrency: int, seconds: float, server: Process) -> Result:
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, timeout=60) as client:
        for _ in range(3):  # warm-up
            await one_request(client, target, stream)
        latencies: list[float] = []
        errors = 0
        stop_at = 0.0

        async def worker() -> None:
            nonlocal errors
            while time.perf_counter() < stop_at:
                try:
                    latencies.append(await one_request(client, target, stream))
                except Exception:
                    errors += 1

        cpu_before = server.cpu_seconds()
        started = time.perf_counter()
        stop_at = started + seconds
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
        cpu = server.cpu_seconds() - cpu_before
    mode = "sse" if stream else "json"
    return Result(target.name, mode, concurrency, len(latencies), errors, elapsed, cpu, latencies)


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


def create_published(base_url: str, key: str, body: dict[str, Any]) -> str:
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=base_url, headers=headers, timeout=30) as client:
        reply = client.post("/api/core/app/create", json=body).json()
        app_id = str(reply["data"])
        client.post("/api/core/app/version/publish", json={"appId": app_id}).raise_for_status()
    return app_id


def table(results: list[Result]) -> str:
    lines = [
        "| target | mode | clients | req/s | req per server CPU-s | p50 ms | p95 ms | errors |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {r.target} | {r.mode} | {r.concurrency} | {r.rps:.0f} | {r.per_cpu_second:.0f} "
            f"| {r.pct(0.5):.1f} | {r.pct(0.95):.1f} | {r.errors} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 10, 100])
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--serve-model", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--serve-bare", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_model:
        return serve_model(args.serve_model)
    if args.serve_bare:
        return serve_bare(args.serve_bare)

    me = [sys.executable, str(Path(__file__).resolve())]
    model_port, bare_port, fathom_port = free_port(), free_port(), free_port()
    data_dir = Path(tempfile.mkdtemp(prefix="fathom-bench-api-"))
    model = Process([*me, "--serve-model", str(model_port)])
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
    fathom = Process([sys.executable, "-m", "fathom", "serve"], env=env)
    try:
        model.read_until("ready")
        fathom.read_until("Fathom ")
        key = next(line.strip() for line in fathom.lines if line.strip().startswith("fathom-"))
        wait_http(f"http://127.0.0.1:{fathom_port}/api/health")
        wait_http(f"http://127.0.0.1:{bare_port}/docs")
        base = f"http://127.0.0.1:{fathom_port}"
        workflow_app = create_published(base, key, start_answer_app())
        chat_app = create_published(
            base,
            key,
            {"name": "chat", "type": "simple", "simpleConfig": {"model": MODEL, "systemPrompt": "Be brief."}},
        )
        auth = {"Authorization": f"Bearer {key}"}
        messages = [{"role": "user", "content": "hello"}]
        targets = [
            (
                Target(
                    "bare FastAPI",
                    f"http://127.0.0.1:{bare_port}/bare",
                    {"messages": messages},
                    stream_url=f"http://127.0.0.1:{bare_port}/bare/stream",
                ),
                bare,
            ),
            (
                Target(
                    "start→answer",
                    f"{base}/api/v1/chat/completions",
                    {"appId": workflow_app, "messages": messages},
                    auth,
                ),
                fathom,
            ),
            (
                Target(
                    "chat app",
                    f"{base}/api/v1/chat/completions",
                    {"appId": chat_app, "messages": messages},
                    auth,
                ),
                fathom,
            ),
        ]
        results: list[Result] = []
        for target, server in targets:
            for stream in (False, True):
                for concurrency in args.concurrency:
                    result = asyncio.run(
                        load(
                            target,
                            stream=stream,
                            concurrency=concurrency,
                            seconds=args.seconds,
                            server=server,
                        )
                    )
                    results.append(result)
                    print(
                        f"{result.target:14} {result.mode:4} c={concurrency:<3} {result.rps:7.0f} req/s "
                        f"{result.per_cpu_second:7.0f} req/CPU-s p50 {result.pct(0.5):7.1f} ms "
                        f"p95 {result.pct(0.95):7.1f} ms errors {result.errors}",
                        flush=True,
                    )
        print()
        print(table(results))
        print()
        bare_best = {
            m: max(r.rps for r in results if r.target == "bare FastAPI" and r.mode == m)
            for m in ("json", "sse")
        }
        for name in ("start→answer", "chat app"):
            for mode in ("json", "sse"):
                best = max((r for r in results if r.target == name and r.mode == mode), key=lambda r: r.rps)
                print(
                    f"{name} {mode}: best {best.rps:.0f} req/s at {best.concurrency} clients = "
                    f"{best.rps / bare_best[mode]:.2f} x bare FastAPI; "
                    f"{best.per_cpu_second:.0f} req per server CPU-s"
                )
        if args.json:
            args.json.write_text(
                json.dumps(
                    [
                        {
                            "target": r.target,
                            "mode": r.mode,
                            "concurrency": r.concurrency,
                            "rps": r.rps,
                            "perCpuSecond": r.per_cpu_second,
                            "p50ms": r.pct(0.5),
                            "p95ms": r.pct(0.95),
                            "errors": r.errors,
                        }
                        for r in results
                    ],
                    indent=1,
                )
            )
    finally:
        for process in (fathom, bare, model):
            process.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
