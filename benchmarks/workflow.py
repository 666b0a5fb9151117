"""Workflow engine overhead: Fathom vs LangGraph on the same no-op graph shapes, plus pause + resume.

Shapes (node counts include the start node and, for fan-outs, the join node):

- ``seq-N``: a chain of N nodes (``workflowStart`` then N-1 ``emptyNode``; LangGraph: N async no-op
  nodes chained with edges);
- ``fan-N``: start → N parallel no-op nodes → one join node that waits for all of them (Fathom: the
  join's incoming edges are one common group; LangGraph: ``add_edge([...], "join")``).

A run of a shape is timed end to end (Fathom: ``run_workflow`` on a loaded graph, which includes
building the run's runtime copy of the nodes and edges; LangGraph: ``ainvoke`` on a compiled graph)
and divided by the node count: µs per node. Each figure is the median of ``--rounds`` rounds, each
round the mean of as many runs as fit in ``--budget`` seconds (at least 3).

``pause-resume``: a 3-node graph (start → user select → answer) paused and resumed once, per cycle.
LangGraph: a node calling ``interrupt()`` with an in-memory checkpointer, resumed with
``Command(resume=...)``.

Fathom is imported from ``src/`` of this checkout. LangGraph runs in the same process when importable,
else in ``.bench-venv`` (``.bench-venv/bin/pip install langgraph``) as a subprocess of this script;
if neither has it, the LangGraph column is skipped with the reason printed.

Usage: ``.venv/bin/python benchmarks/workflow.py [--rounds 5] [--budget 0.5] [--json]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCH_PYTHON = ROOT / ".bench-venv" / "bin" / "python"
#: Both engines get a step budget above the largest graph (Fathom's default is FastGPT's 500 runs,
#: LangGraph's recursion limit 25).
MAX_RUN_TIMES = 10_000
SHAPES: list[tuple[str, str, int]] = [
    ("seq-10", "seq", 10),
    ("seq-100", "seq", 100),
    ("seq-1000", "seq", 1000),
    ("fan-10", "fan", 10),
    ("fan-100", "fan", 100),
]


def node_count(kind: str, n: int) -> int:
    """Nodes in a shape: the chain length, or start + N branches + join."""
    return n if kind == "seq" else n + 2


async def measure(run: Callable[[], Awaitable[Any]], rounds: int, budget: float) -> float:
    """Median over rounds of the mean seconds per run (each round runs for about ``budget`` s)."""
    await run()  # warm up (imports, caches)
    results = []
    for _ in range(rounds):
        count = 0
        started = time.perf_counter()
        while True:
            await run()
            count += 1
            elapsed = time.perf_counter() - started
            if count >= 3 and elapsed >= budget:
                break
        results.append(elapsed / count)
    return statistics.median(results)


# ----------------------------------------------------------------------------- Fathom
def fathom_graph(kind: str, n: int) -> dict[str, Any]:
    """A FastGPT-format graph of the shape."""

    def node(node_id: str, flow_node_type: str = "emptyNode") -> dict[str, Any]:
        return {
            "nodeId": node_id,
            "name": node_id,
            "flowNodeType": flow_node_type,
            "inputs": [],
            "outputs": [],
        }

    def edge(source: str, target: str) -> dict[str, Any]:
        return {
            "source": source,
            "target": target,
            "sourceHandle": f"{source}-source-right",
            "targetHandle": f"{target}-target-left",
        }

    if kind == "seq":
        ids = ["start"] + [f"n{i}" for i in range(1, n)]
        nodes = [node("start", "workflowStart")] + [node(i) for i in ids[1:]]
        edges = [edge(a, b) for a, b in zip(ids, ids[1:], strict=False)]
    else:
        branch = [f"b{i}" for i in range(n)]
        nodes = [node("start", "workflowStart"), *(node(b) for b in branch), node("join")]
        edges = [edge("start", b) for b in branch] + [edge(b, "join") for b in branch]
    return {"nodes": nodes, "edges": edges}


def select_graph() -> dict[str, Any]:
    """start → userSelect → answer (the pause/resume cycle)."""
    return {
        "nodes": [
            {
                "nodeId": "start",
                "name": "start",
                "flowNodeType": "workflowStart",
                "inputs": [],
                "outputs": [],
            },
            {
                "nodeId": "sel",
                "name": "select",
                "flowNodeType": "userSelect",
                "inputs": [
                    {"key": "description", "value": "Pick", "valueType": "string"},
                    {
                        "key": "userSelectOptions",
                        "value": [{"key": "a", "value": "A"}, {"key": "b", "value": "B"}],
                        "valueType": "any",
                    },
                ],
                "outputs": [{"id": "selectResult", "key": "selectResult", "valueType": "string"}],
            },
            {
                "nodeId": "ans",
                "name": "answer",
                "flowNodeType": "answerNode",
                "inputs": [{"key": "text", "value": "ok", "valueType": "string"}],
                "outputs": [],
            },
        ],
        "edges": [
            {
                "source": "start",
                "target": "sel",
                "sourceHandle": "start-source-right",
                "targetHandle": "sel-target-left",
            },
            {
                "source": "sel",
                "target": "ans",
                "sourceHandle": "sel-source-a",
                "targetHandle": "ans-target-left",
            },
        ],
    }


async def bench_fathom(rounds: int, budget: float) -> dict[str, float]:
    """µs per node per shape, and µs per pause+resume cycle."""
    sys.path.insert(0, str(ROOT / "src"))
    from fathom.workflow import load_workflow, resume_workflow, run_workflow

    out: dict[str, float] = {}
    for name, kind, n in SHAPES:
        graph = load_workflow(fathom_graph(kind, n))
        result = await run_workflow(graph, query="x", max_run_times=MAX_RUN_TIMES)
        assert len(result.run_node_ids) == node_count(kind, n), (name, len(result.run_node_ids))

        async def run(graph: Any = graph) -> None:
            await run_workflow(graph, query="x", max_run_times=MAX_RUN_TIMES)

        out[name] = await measure(run, rounds, budget) * 1e6 / node_count(kind, n)
    select = load_workflow(select_graph())

    async def cycle() -> None:
        paused = await run_workflow(select, query="x")
        assert paused.interactive is not None
        done = await resume_workflow(select, paused.interactive, "A")
        assert done.run_node_ids == ["sel", "ans"]

    out["pause-resume"] = await measure(cycle, rounds, budget) * 1e6
    return out


# ----------------------------------------------------------------------------- LangGraph
async def bench_langgraph(rounds: int, budget: float) -> dict[str, float]:
    """The same shapes on LangGraph (async no-op nodes, ``ainvoke``)."""
    from typing import TypedDict

    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Command, interrupt

    class State(TypedDict, total=False):
        value: str

    async def noop(state: State) -> dict[str, Any]:
        return {}

    def build(kind: str, n: int) -> Any:
        builder = StateGraph(State)
        if kind == "seq":
            ids = [f"n{i}" for i in range(n)]
            for node_id in ids:
                builder.add_node(node_id, noop)
            builder.add_edge(START, ids[0])
            for a, b in zip(ids, ids[1:], strict=False):
                builder.add_edge(a, b)
            builder.add_edge(ids[-1], END)
        else:
            branch = [f"b{i}" for i in range(n)]
            builder.add_node("start", noop)
            builder.add_node("join", noop)
            for b in branch:
                builder.add_node(b, noop)
                builder.add_edge("start", b)
            builder.add_edge(START, "start")
            builder.add_edge(branch, "join")
            builder.add_edge("join", END)
        return builder.compile()

    config = {"recursion_limit": MAX_RUN_TIMES}
    out: dict[str, float] = {}
    for name, kind, n in SHAPES:
        app = build(kind, n)

        async def run(app: Any = app) -> None:
            await app.ainvoke({"value": "x"}, config=config)

        out[name] = await measure(run, rounds, budget) * 1e6 / node_count(kind, n)

    async def ask(state: State) -> dict[str, Any]:
        return {"value": interrupt("Pick")}

    builder = StateGraph(State)
    builder.add_node("start", noop)
    builder.add_node("sel", ask)
    builder.add_node("ans", noop)
    builder.add_edge(START, "start")
    builder.add_edge("start", "sel")
    builder.add_edge("sel", "ans")
    builder.add_edge("ans", END)
    app = builder.compile(checkpointer=InMemorySaver())
    counter = iter(range(10**9))

    async def cycle() -> None:
        thread = {"configurable": {"thread_id": str(next(counter))}}
        paused = await app.ainvoke({"value": "x"}, config=thread)
        assert "__interrupt__" in paused
        done = await app.ainvoke(Command(resume="A"), config=thread)
        assert done["value"] == "A"

    out["pause-resume"] = await measure(cycle, rounds, budget) * 1e6
    return out


def langgraph_results(rounds: int, budget: float) -> tuple[dict[str, float] | None, str]:
    """LangGraph figures (in-process or from ``.bench-venv``) and where they came from / why not."""
    try:
        import langgraph  # noqa: F401
    except ImportError:
        pass
    else:
        from importlib.metadata import version

        return asyncio.run(bench_langgraph(rounds, budget)), f"langgraph {version('langgraph')} (in process)"
    if not BENCH_PYTHON.exists():
        return None, f"LangGraph skipped: not importable here and {BENCH_PYTHON} does not exist"
    cmd = [str(BENCH_PYTHON), __file__, "--langgraph-only", "--rounds", str(rounds), "--budget", str(budget)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env={**os.environ})
    if proc.returncode != 0:
        reason = (proc.stderr.strip().splitlines() or ["unknown error"])[-1]
        return None, f"LangGraph skipped: {BENCH_PYTHON} failed ({reason})"
    payload = json.loads(proc.stdout)
    return payload["results"], f"langgraph {payload['version']} (.bench-venv subprocess)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--budget", type=float, default=0.5, help="seconds per round")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--langgraph-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.langgraph_only:
        from importlib.metadata import version

        results = asyncio.run(bench_langgraph(args.rounds, args.budget))
        print(json.dumps({"results": results, "version": version("langgraph")}))
        return
    fathom = asyncio.run(bench_fathom(args.rounds, args.budget))
    peer, source = langgraph_results(args.rounds, args.budget)
    if args.json:
        print(json.dumps({"fathom": fathom, "langgraph": peer, "langgraph_source": source}, indent=2))
        return
    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, {source}")
    print(f"{'shape':<14}{'Fathom':>14}{'LangGraph':>14}{'ratio F/LG':>12}")
    for name in [s[0] for s in SHAPES] + ["pause-resume"]:
        unit = "µs/cycle" if name == "pause-resume" else "µs/node"
        lg = peer.get(name) if peer else None
        ratio = f"{fathom[name] / lg:.2f}" if lg else "-"
        lg_text = f"{lg:,.1f}" if lg else "-"
        print(f"{name:<14}{fathom[name]:>10,.1f}    {lg_text:>10}    {ratio:>8}   {unit}")
    if peer is None:
        print(source)


if __name__ == "__main__":
    main()
