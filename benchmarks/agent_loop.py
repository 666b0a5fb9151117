"""Agent loop overhead: wall time and CPU per loop iteration, Fathom vs pydantic-ai vs OpenAI Agents SDK.

One run = user prompt → the model calls 3 tools (add, multiply, echo) → the tools run → the model
answers: two model requests, i.e. two loop iterations. Every contender drives the same scripted
OpenAI-compatible server (``fathom.testing``), which runs in its own process so the CPU measured is
the client's alone. Each contender runs in its own process too:

- ``fathom-fastAgent`` (streaming, the default) and ``fathom-fastAgent-nostream``
- ``fathom-pydanticAI``: Fathom's second provider (pydantic-ai drives the loop)
- ``pydantic-ai``: a plain pydantic-ai ``Agent`` with the same three tools
- ``openai-agents``: the OpenAI Agents SDK (``Runner.run``, chat-completions model, tracing off),
  run with ``.bench-venv/bin/python`` (``.bench-venv/bin/pip install openai-agents pydantic-ai-slim``)

Usage: ``.venv/bin/python benchmarks/agent_loop.py --runs 200 --rounds 3``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCH_PYTHON = ROOT / ".bench-venv" / "bin" / "python"
MODEL = "scripted-chat"
PROMPT = "Compute (2+3)*4 and echo hi."
CONTENDERS = {
    "fathom-fastAgent": "main",
    "fathom-fastAgent-nostream": "main",
    "fathom-pydanticAI": "main",
    "pydantic-ai": "main",
    "openai-agents": "bench",
}


# -- the scripted server (its own process) -----------------------------------------------------


def serve(port_file: Path) -> None:
    """Serve the benchmark script until killed; write the port to ``port_file``."""
    from fathom.testing import ScriptedOpenAIServer, text_turn, tool_call_turn

    calls = [("add", {"a": 2, "b": 3}), ("multiply", {"a": 5, "b": 4}), ("echo", {"text": "hi"})]

    def script(request: Any) -> Any:
        messages = request.json.get("messages") or []
        if messages and messages[-1].get("role") == "tool":
            return text_turn("The result is 20 and hi.", usage=(120, 10))
        return tool_call_turn(calls, usage=(100, 30))

    with ScriptedOpenAIServer(script) as server:
        port_file.write_text(str(server.port))
        while True:
            time.sleep(3600)


# -- contenders (each in its own process) ------------------------------------------------------


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def echo(text: str) -> str:
    """Echo the text back."""
    return text


async def fathom_runner(base_url: str, provider: str, stream: bool) -> Any:
    from fathom.agent import AgentLoopInput, AgentLoopRuntime, run_agent_loop
    from fathom.llm import ModelConfig, OpenAIChatModel
    from fathom.tools import function_tool

    model = OpenAIChatModel(ModelConfig(id=MODEL, base_url=base_url, api_key="bench", max_context=128000))
    tools = [function_tool(add), function_tool(multiply), function_tool(echo)]
    runtime = AgentLoopRuntime(model=model, tools=tools, stream=stream)

    async def run() -> None:
        result = await run_agent_loop(
            provider, AgentLoopInput(messages=[{"role": "user", "content": PROMPT}]), runtime
        )
        assert result.status == "done" and result.answer_text, result.error

    return run


async def pydantic_ai_runner(base_url: str) -> Any:
    from openai import AsyncOpenAI
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    client = AsyncOpenAI(base_url=base_url, api_key="bench")
    agent = Agent(
        OpenAIChatModel(MODEL, provider=OpenAIProvider(openai_client=client)), tools=[add, multiply, echo]
    )

    async def run() -> None:
        result = await agent.run(PROMPT)
        assert result.output

    return run


async def openai_agents_runner(base_url: str) -> Any:
    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_tracing_disabled
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=base_url, api_key="bench")
    agent = Agent(
        name="bench",
        model=OpenAIChatCompletionsModel(MODEL, openai_client=client),
        tools=[function_tool(add), function_tool(multiply), function_tool(echo)],
    )

    async def run() -> None:
        result = await Runner.run(agent, PROMPT)
        assert result.final_output

    return run


async def measure(name: str, base_url: str, runs: int, warmup: int) -> dict[str, float]:
    if name == "fathom-fastAgent":
        run = await fathom_runner(base_url, "fastAgent", True)
    elif name == "fathom-fastAgent-nostream":
        run = await fathom_runner(base_url, "fastAgent", False)
    elif name == "fathom-pydanticAI":
        run = await fathom_runner(base_url, "pydanticAI", False)
    elif name == "pydantic-ai":
        run = await pydantic_ai_runner(base_url)
    elif name == "openai-agents":
        run = await openai_agents_runner(base_url)
    else:
        raise SystemExit(f"unknown contender {name}")
    for _ in range(warmup):
        await run()
    wall0, cpu0 = time.perf_counter(), time.process_time()
    for _ in range(runs):
        await run()
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    iterations = runs * 2
    return {"wall_us": wall / iterations * 1e6, "cpu_us": cpu / iterations * 1e6}


# -- orchestration -----------------------------------------------------------------------------


def _python_for(kind: str) -> Path | None:
    if kind == "main":
        return Path(sys.executable)
    return BENCH_PYTHON if BENCH_PYTHON.exists() else None


def run_contender(name: str, base_url: str, runs: int, warmup: int) -> dict[str, float] | str:
    python = _python_for(CONTENDERS[name])
    if python is None:
        return f"skipped: {BENCH_PYTHON.relative_to(ROOT)} missing"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") if CONTENDERS[name] == "main" else ""}
    args = [str(python), __file__, "--contender", name, "--base-url", base_url, "--runs", str(runs)]
    done = subprocess.run(
        [*args, "--warmup", str(warmup)], capture_output=True, text=True, env=env, check=False
    )
    if done.returncode != 0:
        return "failed: " + (done.stderr.strip().splitlines() or ["?"])[-1]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--contender")
    parser.add_argument("--base-url")
    parser.add_argument("--serve", type=Path)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return
    if args.contender:
        print(json.dumps(asyncio.run(measure(args.contender, args.base_url, args.runs, args.warmup))))
        return
    port_file = Path(tempfile.mkdtemp(prefix="fathom-bench-")) / "port"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(port_file)], env=env)
    try:
        while not (port_file.exists() and port_file.read_text().strip()):
            time.sleep(0.05)
        base_url = f"http://127.0.0.1:{port_file.read_text().strip()}/v1"
        results: dict[str, list[dict[str, float]]] = {name: [] for name in CONTENDERS}
        notes: dict[str, str] = {}
        names = list(CONTENDERS)
        for round_index in range(args.rounds):
            order = names[round_index % len(names) :] + names[: round_index % len(names)]
            for name in order:
                outcome = run_contender(name, base_url, args.runs, args.warmup)
                if isinstance(outcome, str):
                    notes[name] = outcome
                else:
                    results[name].append(outcome)
    finally:
        server.terminate()
        server.wait()
        port_file.unlink(missing_ok=True)
    base = results["fathom-fastAgent"]
    base_wall = statistics.median(r["wall_us"] for r in base) if base else None
    base_cpu = statistics.median(r["cpu_us"] for r in base) if base else None
    print(f"runs={args.runs} rounds={args.rounds} (2 loop iterations per run, 3 tool calls per run)")
    print(f"{'contender':28} {'wall/iter':>12} {'cpu/iter':>12} {'wall ratio':>11} {'cpu ratio':>10}")
    for name in CONTENDERS:
        if not results[name]:
            print(f"{name:28} {notes.get(name, 'no result')}")
            continue
        wall = statistics.median(r["wall_us"] for r in results[name])
        cpu = statistics.median(r["cpu_us"] for r in results[name])
        wall_ratio = f"{wall / base_wall:.2f}" if base_wall else "-"
        cpu_ratio = f"{cpu / base_cpu:.2f}" if base_cpu else "-"
        print(f"{name:28} {wall:10,.0f}µs {cpu:10,.0f}µs {wall_ratio:>11} {cpu_ratio:>10}")


if __name__ == "__main__":
    main()
