"""Workflow engine overhead: Fathom vs LangGraph (sync ``invoke`` and async ``ainvoke``) on the same
no-op graph shapes, plus pause + resume, by CPU time, interleaved.

Shapes (node counts include the start node and, for fan-outs, the join node):

- ``seq-N``: a chain of N nodes (``workflowStart`` then N-1 ``emptyNode``; LangGraph: N no-op nodes
  chained with edges);
- ``fan-N``: start → N parallel no-op nodes → one join node that waits for all of them (Fathom: the
  join's incoming edges are one common group; LangGraph: ``add_edge([...], "join")``).
- ``pause-resume``: a 3-node graph (start → user select → answer) paused and resumed once, per cycle.
  LangGraph: a node calling ``interrupt()`` with an in-memory checkpointer, resumed with
  ``Command(resume=...)``.

Method: every contender is its own long-lived worker process, started once and warmed up (every graph
built and run once): Fathom (``run_workflow`` on a loaded graph, which includes building the run's
runtime copy of the nodes and edges), LangGraph with sync nodes through ``invoke`` and LangGraph with
async nodes through ``ainvoke`` (both compiled once). Each round, for each shape, the contenders run in
an order rotated by one each round; a contender's share is as many runs as take ``--budget`` seconds of
its CPU, and what counts is the CPU time its process spent over the share (utime + stime from
``/proc/<pid>/stat``) divided by runs × nodes: CPU µs per node (per cycle for pause-resume). The
report gives each contender's median over ``--rounds`` rounds and min / median / max of the per-round
ratios Fathom / LangGraph. Wall time is not used: the machine is shared.

LangGraph runs from ``.bench-venv`` (``python3 -m venv .bench-venv && .bench-venv/bin/pip install
langgraph``) or this interpreter when it can import it; otherwise its columns are skipped with the
reason printed.

Usage: ``.venv/bin/python benchmarks/workflow.py [--rounds 3] [--budget 0.3] [--json out.json]``
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
from collections.abc import Callable
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
PAUSE = "pause-resume"
CONTENDERS = ("Fathom", "LangGraph invoke", "LangGraph ainvoke")


def node_count(kind: str, n: int) -> int:
    """Nodes in a shape: the chain length, or start + N branches + join."""
    return n if kind == "seq" else n + 2


def units(name: str) -> int:
    """What a run's CPU is divided by: its nodes, or 1 for a pause + resume cycle."""
    for shape, kind, n in SHAPES:
        if shape == name:
            return node_count(kind, n)
    return 1


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


async def fathom_runs() -> dict[str, Callable[[], Any]]:
    """One coroutine factory per shape (a run) and for pause-resume (a cycle)."""
    sys.path.insert(0, str(ROOT / "src"))
    from fathom.workflow import load_workflow, resume_workflow, run_workflow

    runs: dict[str, Callable[[], Any]] = {}
    for name, kind, n in SHAPES:
        graph = load_workflow(fathom_graph(kind, n))
        result = await run_workflow(graph, query="x", max_run_times=MAX_RUN_TIMES)
        assert len(result.run_node_ids) == node_count(kind, n), (name, len(result.run_node_ids))

        async def run(graph: Any = graph) -> None:
            await run_workflow(graph, query="x", max_run_times=MAX_RUN_TIMES)

        runs[name] = run
    select = load_workflow(select_graph())

    async def cycle() -> None:
        paused = await run_workflow(select, query="x")
        assert paused.interactive is not None
        done = await resume_workflow(select, paused.interactive, "A")
        assert done.run_node_ids == ["sel", "ans"]

    runs[PAUSE] = cycle
    return runs


# ----------------------------------------------------------------------------- LangGraph
def langgraph_runs(sync: bool) -> dict[str, Callable[[], Any]]:
    """The same shapes on LangGraph: sync no-op nodes through ``invoke`` or async ones through
    ``ainvoke`` (a factory returning None or a coroutine per run)."""
    from typing import TypedDict

    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Command, interrupt

    class State(TypedDict, total=False):
        value: str

    def noop_sync(state: State) -> dict[str, Any]:
        return {}

    async def noop_async(state: State) -> dict[str, Any]:
        return {}

    noop: Any = noop_sync if sync else noop_async

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
    runs: dict[str, Callable[[], Any]] = {}
    for name, kind, n in SHAPES:
        app = build(kind, n)
        runs[name] = (
            (lambda app=app: app.invoke({"value": "x"}, config=config))
            if sync
            else (lambda app=app: app.ainvoke({"value": "x"}, config=config))
        )

    def ask_sync(state: State) -> dict[str, Any]:
        return {"value": interrupt("Pick")}

    async def ask_async(state: State) -> dict[str, Any]:
        return {"value": interrupt("Pick")}

    builder = StateGraph(State)
    builder.add_node("start", noop)
    builder.add_node("sel", ask_sync if sync else ask_async)
    builder.add_node("ans", noop)
    builder.add_edge(START, "start")
    builder.add_edge("start", "sel")
    builder.add_edge("sel", "ans")
    builder.add_edge("ans", END)
    app = builder.compile(checkpointer=InMemorySaver())
    counter = iter(range(10**9))

    def cycle_sync() -> None:
        thread = {"configurable": {"thread_id": str(next(counter))}}
        assert "__interrupt__" in app.invoke({"value": "x"}, config=thread)
        assert app.invoke(Command(resume="A"), config=thread)["value"] == "A"

    async def cycle_async() -> None:
        thread = {"configurable": {"thread_id": str(next(counter))}}
        assert "__interrupt__" in await app.ainvoke({"value": "x"}, config=thread)
        assert (await app.ainvoke(Command(resume="A"), config=thread))["value"] == "A"

    runs[PAUSE] = cycle_sync if sync else cycle_async
    return runs


# ----------------------------------------------------------------------------- worker processes
def serve_worker(contender: str) -> None:
    """A contender's long-lived process: build and warm every graph, then per line ``{"shape",
    "budget"}`` on stdin run the shape until ``budget`` seconds of CPU and answer the run count."""

    async def main() -> None:
        if contender == "Fathom":
            runs = await fathom_runs()
        else:
            runs = langgraph_runs(sync=contender == "LangGraph invoke")
        for run in runs.values():  # warm-up
            result = run()
            if asyncio.iscoroutine(result):
                await result
        version = "fathom"
        if contender != "Fathom":
            from importlib.metadata import version as package_version

            version = f"langgraph {package_version('langgraph')}"
        print(json.dumps({"ready": version}), flush=True)
        for line in sys.stdin:
            request = json.loads(line)
            run, count = runs[request["shape"]], 0
            started = time.process_time()
            while count < 3 or time.process_time() - started < request["budget"]:
                result = run()
                if asyncio.iscoroutine(result):
                    await result
                count += 1
            print(json.dumps({"runs": count}), flush=True)

    asyncio.run(main())


class Worker:
    def __init__(self, contender: str, python: str) -> None:
        self.contender = contender
        self.process = subprocess.Popen(
            [python, __file__, "--worker", contender],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        line = self.process.stdout.readline() if self.process.stdout else ""
        if not line:
            error = self.process.stderr.read() if self.process.stderr else ""
            raise RuntimeError((error.strip().splitlines() or ["no output"])[-1])
        self.version = str(json.loads(line)["ready"])

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def share(self, shape: str, budget: float) -> float:
        """CPU µs per unit (node or cycle) of one share."""
        assert self.process.stdin is not None and self.process.stdout is not None
        before = self.cpu_seconds()
        self.process.stdin.write(json.dumps({"shape": shape, "budget": budget}) + "\n")
        self.process.stdin.flush()
        runs = int(json.loads(self.process.stdout.readline())["runs"])
        return (self.cpu_seconds() - before) * 1e6 / (runs * units(shape))

    def stop(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=30)


def langgraph_python() -> tuple[str | None, str]:
    """The interpreter that can import LangGraph, or None and why not."""
    try:
        import langgraph  # noqa: F401
    except ImportError:
        pass
    else:
        return sys.executable, "this interpreter"
    if not BENCH_PYTHON.exists():
        return None, f"LangGraph skipped: not importable here and {BENCH_PYTHON} does not exist"
    probe = subprocess.run([str(BENCH_PYTHON), "-c", "import langgraph"], capture_output=True, text=True)
    if probe.returncode != 0:
        return None, f"LangGraph skipped: {BENCH_PYTHON} cannot import it"
    return str(BENCH_PYTHON), str(BENCH_PYTHON)


def spread(values: list[float]) -> str:
    return f"{min(values):.3f} / {statistics.median(values):.3f} / {max(values):.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--budget", type=float, default=0.3, help="CPU seconds per contender share")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        serve_worker(args.worker)
        return
    python, where = langgraph_python()
    workers = [Worker("Fathom", sys.executable)]
    if python is not None:
        workers += [Worker("LangGraph invoke", python), Worker("LangGraph ainvoke", python)]
    shapes = [s[0] for s in SHAPES] + [PAUSE]
    figures: dict[str, dict[str, list[float]]] = {s: {w.contender: [] for w in workers} for s in shapes}
    try:
        for number in range(args.rounds):
            order = workers[number % len(workers) :] + workers[: number % len(workers)]
            print(f"round {number + 1}: {', '.join(w.contender for w in order)}", flush=True)
            for shape in shapes:
                for worker in order:
                    figures[shape][worker.contender].append(worker.share(shape, args.budget))
    finally:
        for worker in workers:
            worker.stop()
    print(
        f"\npython {platform.python_version()}, {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.1f}; {workers[-1].version} from {where}"
        if python
        else where
    )
    names = [w.contender for w in workers]
    head = " | ".join(f"{n} CPU µs (median)" for n in names)
    ratios_head = " | ".join(f"Fathom / {n}, min / median / max" for n in names[1:])
    print(f"\n| shape | {head} | {ratios_head} |")
    print("|---|" + "---:|" * len(names) + "---|" * (len(names) - 1))
    out: dict[str, Any] = {}
    for shape in shapes:
        row = figures[shape]
        ratios = {n: [f / lg for f, lg in zip(row["Fathom"], row[n], strict=True)] for n in names[1:]}
        out[shape] = {"cpu_us": row, "ratios": ratios}
        cells = " | ".join(f"{statistics.median(row[n]):,.1f}" for n in names)
        ratio_cells = " | ".join(spread(ratios[n]) for n in names[1:])
        print(f"| {shape} ({'per cycle' if shape == PAUSE else 'per node'}) | {cells} | {ratio_cells} |")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
