"""CPU per read of an app, the read every chat request makes, for real FastGPT apps of every size.

    .venv/bin/python benchmarks/app_read.py [--reads 3000]

Stores each app's workflow (``../shared/datasets/fastgpt-apps``: a knowledge-base chat of 9 KB, a GitHub
issue bot of 29 KB, a long-text translator of 85 KB) as the draft of an app in a fresh SQLite data dir,
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

from fathom.config import Settings
from fathom.gc_tuning import tune_garbage_collector
from fathom.platform import Platform

APPS = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "fastgpt-apps"
NAMES = ("fg-simpleDatasetChat", "fg-githubIssue", "fg-longTranslate")


def draft_of(name: str) -> dict[str, object]:
    workflow = json.loads((APPS / f"{name}.json").read_text())["workflow"]
    nodes = workflow.get("nodes") or workflow.get("modules") or []
    return {"nodes": nodes, "edges": workflow.get("edges", []), "chatConfig": workflow.get("chatConfig", {})}


async def measure(reads: int) -> dict[str, float]:
    root = Path(tempfile.mkdtemp(prefix="fathom-app-read-"))
    platform = Platform.build(Settings(data_dir=root / "data", workers=0, seed_demo=False))
    boot = await platform.prepare()
    repository = platform.chat.apps.apps
    result: dict[str, float] = {}
    try:
        for name in NAMES:
            app = await repository.create_app(boot.team_id, name, type="advanced", draft=draft_of(name))
            for _ in range(200):  # warm-up
                await repository.get_app_and_owner(boot.team_id, app.id)
            tune_garbage_collector()
            began = time.process_time()
            for _ in range(reads):
                await repository.get_app_and_owner(boot.team_id, app.id)
            result[name] = round((time.process_time() - began) / reads * 1e6, 1)
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
