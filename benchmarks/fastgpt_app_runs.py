"""CPU per run of FastGPT's own apps that need no outside service, this checkout against another, alternated.

    PYTHONPATH=src .venv/bin/python benchmarks/fastgpt_app_runs.py --before /path/to/other/checkout
        [--rounds 5] [--runs 1000]

The apps are FastGPT's exports in ``tests/chat/fastgpt_apps`` whose nodes all run without a model, a
sandbox or the network (today ``fgtest-loopTest``: start → a loop of three items → answer). Each side is a
long-lived process of its own (``PYTHONPATH=<checkout>/src``) that loads each app's graph once, as a
published version is, and runs it ``--runs`` times per round through ``run_workflow`` with a stop event,
as a chat does; what counts is the process's own CPU over the runs (``time.process_time``). Rounds
alternate the order of the sides; the report gives each side's median µs per run and min / median / max
of the after / before ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
APPS = HERE.parent / "tests" / "chat" / "fastgpt_apps"
SELF_SERVICE = {
    "workflowStart",
    "userGuide",
    "answerNode",
    "loop",
    "loopStart",
    "loopEnd",
    "ifElseNode",
    "textEditor",
    "variableUpdate",
    "emptyNode",
}

WORKER = r"""
import asyncio, json, sys, time
from fathom.workflow import run_workflow
from fathom.workflow.graph import load_workflow

graphs = {}
for path in json.loads(sys.argv[1]):
    document = json.load(open(path))
    graphs[path] = load_workflow(document.get("workflow", document))
query = [{"type": "text", "text": {"content": "hi"}}]

async def runs(graph, count):
    for _ in range(count):
        result = await run_workflow(graph, query=query, emit=lambda event: None, stop=asyncio.Event())
        assert result.error is None, result.error

async def serve():
    for graph in graphs.values():
        await runs(graph, 50)  # warm: imports, the graph's first run
    print("ready", flush=True)
    for line in sys.stdin:
        path, count = line.split("\t")
        started = time.process_time()
        await runs(graphs[path], int(count))
        print((time.process_time() - started) / int(count) * 1e6, flush=True)

asyncio.run(serve())
"""


def runnable_apps() -> list[Path]:
    found = []
    for path in sorted(APPS.glob("*.json")):
        document = json.loads(path.read_text())
        nodes = document.get("workflow", document)["nodes"]
        if {node["flowNodeType"] for node in nodes} <= SELF_SERVICE:
            found.append(path)
    return found


def start(source: Path, apps: list[Path]) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(source)}
    process = subprocess.Popen(
        [sys.executable, "-c", WORKER, json.dumps([str(p) for p in apps])],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    if process.stdout.readline().strip() != "ready":
        raise RuntimeError(f"the worker on {source} did not start")
    return process


def measure(process: subprocess.Popen[str], app: Path, runs: int) -> float:
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(f"{app}\t{runs}\n")
    process.stdin.flush()
    return float(process.stdout.readline())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="a checkout of the older code")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=1000, help="runs of each app per side and round")
    args = parser.parse_args()
    apps = runnable_apps()
    sides = {"before": args.before.resolve() / "src", "after": HERE.parent / "src"}
    workers = {name: start(source, apps) for name, source in sides.items()}
    try:
        for app in apps:
            figures: dict[str, list[float]] = {name: [] for name in sides}
            for number in range(args.rounds):
                order = list(sides) if number % 2 == 0 else list(reversed(sides))
                for name in order:
                    figures[name].append(measure(workers[name], app, args.runs))
            ratios = [
                after / before for after, before in zip(figures["after"], figures["before"], strict=True)
            ]
            print(
                f"{app.stem}: before {statistics.median(figures['before']):.0f} µs a run, "
                f"after {statistics.median(figures['after']):.0f}; after / before "
                f"{min(ratios):.3f} / {statistics.median(ratios):.3f} / {max(ratios):.3f}"
                " (min / median / max)"
            )
    finally:
        for process in workers.values():
            process.kill()


if __name__ == "__main__":
    main()
