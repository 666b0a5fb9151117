"""CPU per read of an app, the read every chat request makes, for real FastGPT apps of every size.

    .venv/bin/python benchmarks/app_read.py [--reads 3000]

Stores each app's workflow (FastGPT's own, as copied into ``tests/chat/fastgpt_apps`` from
``../shared/datasets/fastgpt-apps``: a knowledge-base chat of 9 KB, a GitHub issue bot of 29 KB, a
long-text translator of 85 KB) as the draft of an app in a fresh SQLite data dir,
then times ``get_app_and_owner`` (what ``load_app_and_owner`` calls for every chat) with this process's
CPU clock, after the start-up objects are frozen out of the garbage collector as ``fathom serve`` does.
Prints one JSON object: µs of CPU per read, per app. Run it with another checkout's code
(``PYTHONPATH=<checkout>/src``) to compare before and after; alternate the two, the machine is noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from fathom.config import Settings
from fathom.gc_tuning import tune_garbage_collector
from fathom.platform import Platform

APPS = Path(__file__).resolve().parents[1] / "tests" / "chat" / "fastgpt_apps"  # copies of the shared ones
NAMES = ("fg-simpleDatasetChat", "fg-githubIssue", "fg-longTranslate")


def draft_of(name: str) -> dict[str, Any]:
    workflow = json.loads((APPS / f"{name}.json").read_text())["workflow"]
    nodes = workflow.get("nodes") or workflow.get("modules") or []
    return {"nodes": nodes, "edges": workflow.get("edges", []), "chatConfig": workflow.get("chatConfig", {})}


def version_of(name: str) -> dict[str, Any]:
    draft = draft_of(name)
    return {"nodes": draft["nodes"], "edges": draft["edges"], "chat_config": draft["chatConfig"]}


def history_limit(graph: Any) -> int:
    """The history length a chat loads (code before 2026-12-06 worked it out from the document)."""
    if hasattr(graph, "history_limit"):
        return int(graph.history_limit)
    from fathom.chat import chat_service

    return int(chat_service._history_load_limit(graph.workflow))  # type: ignore[attr-defined]


async def measure(reads: int) -> dict[str, dict[str, float]]:
    root = Path(tempfile.mkdtemp(prefix="fathom-app-read-"))
    platform = Platform.build(Settings(data_dir=root / "data", workers=0, seed_demo=False))
    boot = await platform.prepare()
    apps = platform.chat.apps
    repository = apps.apps
    result: dict[str, dict[str, float]] = {"app read": {}, "app read + published graph": {}}
    team = boot.team_id

    async def read(app_id: str) -> None:
        await repository.get_app_and_owner(team, app_id)

    async def read_and_graph(app_id: str) -> None:  # what a chat's preparation takes of the app
        app, _ = await repository.get_app_and_owner(team, app_id)
        graph = await apps.run_graph(team, app_id, app=app)
        _ = graph.chat_config, history_limit(graph)

    try:
        for name in NAMES:
            app = await repository.create_app(team, name, type="advanced", draft=draft_of(name))
            await repository.publish(team, app.id, **version_of(name))
            for label, step in (("app read", read), ("app read + published graph", read_and_graph)):
                for _ in range(200):  # warm-up (the version cache filled)
                    await step(app.id)
                tune_garbage_collector()
                began = time.process_time()
                for _ in range(reads):
                    await step(app.id)
                result[label][name] = round((time.process_time() - began) / reads * 1e6, 1)
    finally:
        await platform.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reads", type=int, default=3000)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(measure(args.reads))))


if __name__ == "__main__":
    main()
