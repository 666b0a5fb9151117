"""Time from a text import to its collection being ready, on ``fathom serve``'s own in-process workers.

    PYTHONPATH=src .venv/bin/python benchmarks/import_ready.py [--before CHECKOUT] [--rounds 3] [--imports 20]
        [--dedicated-worker]

What a user waits for after ``collection/create/text`` (or an upload in the console) before the text is
searchable: the job's wait to be claimed, then its chunking and embedding. One ``fathom serve`` per code
(fresh SQLite data dir, ``FATHOM_WORKERS=1``, the first-start demo off) on the scripted embedding model (its
own process: each text's hash vector, answered at once), so what is measured is Fathom's side. Each round
imports ``--imports`` short texts one after another into one knowledge base per server and polls
``collection/detail`` every 10 ms until each is ``ready``; with ``--before`` (another checkout, e.g. a
``git worktree``) its server takes its turn in every round, the order alternating. Reported: each round's
median and max of the import → ready wall time per code, and the medians' ratio after / before.

``--dedicated-worker``: the deployment guide's layout instead, on PostgreSQL (embedded, one database per
code): ``fathom serve`` with ``FATHOM_WORKERS=0`` and one ``fathom worker`` process that claims the jobs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from api import Process, free_port, wait_http  # noqa: E402

TEXT = "## Refunds\n\nRefunds are paid back to the original card within five working days of the return."


class Server:
    def __init__(self, name: str, source: Path | None, model_url: str, database_url: str | None) -> None:
        self.name = name
        self.data_dir = Path(tempfile.mkdtemp(prefix=f"fathom-import-{name}-"))
        models = self.data_dir / "models.yaml"
        models.write_text(
            "default_embedding: scripted-embedding\nmodels:\n"
            f"  - {{id: scripted-embedding, type: embedding, base_url: '{model_url}', dimensions: 256}}\n",
            encoding="utf-8",
        )
        port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("FATHOM_")}
        env.update(
            {
                "FATHOM_DATA_DIR": str(self.data_dir / "data"),
                "FATHOM_PORT": str(port),
                "FATHOM_WORKERS": "1",
                "FATHOM_SEED_DEMO": "false",
                "FATHOM_LOG_LEVEL": "warning",
                "FATHOM_MODELS_FILE": str(models),
            }
        )
        if source is not None:
            env["PYTHONPATH"] = str(source / "src")
        self.worker: Process | None = None
        if database_url is not None:  # the jobs go to a dedicated `fathom worker`
            env.update(
                FATHOM_DATABASE_URL=database_url,
                FATHOM_SECRET_KEY="import-ready-benchmark-secret-0123456789",
                FATHOM_WORKERS="0",
            )
        self.process = Process([sys.executable, "-m", "fathom", "serve"], env=env)
        self.process.read_until("Fathom ")
        if database_url is not None:
            self.worker = Process([sys.executable, "-m", "fathom", "worker"], env=env)
            self.worker.read_until("worker ")
        key = next(word for line in self.process.lines for word in line.split() if word.startswith("fathom-"))
        self.url = f"http://127.0.0.1:{port}"
        wait_http(f"{self.url}/api/health")
        self.client = httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {key}"}, timeout=60)
        made = self.client.post("/api/core/dataset/create", json={"name": "Imports"})
        self.dataset_id = made.json()["data"]

    def import_once(self, n: int) -> float:
        body = {"datasetId": self.dataset_id, "name": f"t{n}", "text": f"{TEXT} ({n})"}
        started = time.perf_counter()
        created = self.client.post("/api/core/dataset/collection/create/text", json=body)
        collection_id = created.json()["data"]["collectionId"]
        while True:
            detail = self.client.get("/api/core/dataset/collection/detail", params={"id": collection_id})
            status = detail.json()["data"]["status"]
            if status == "ready":
                return time.perf_counter() - started
            if status == "error":
                raise RuntimeError(f"{self.name}: import {n} failed: {detail.text}")
            time.sleep(0.01)

    def stop(self) -> None:
        self.client.close()
        self.process.stop()
        if self.worker is not None:
            self.worker.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="another checkout, measured alternately")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--imports", type=int, default=20, help="imports per server and round")
    parser.add_argument(
        "--dedicated-worker",
        action="store_true",
        help="PostgreSQL, FATHOM_WORKERS=0 on the server and a `fathom worker` process",
    )
    args = parser.parse_args()

    from fathom.store.pg_embedded import EmbeddedPostgres
    from fathom.testing import ScriptedOpenAIServer

    postgres = EmbeddedPostgres() if args.dedicated_worker else None
    if postgres is not None:
        postgres.start()

    def database(name: str) -> str | None:
        return postgres.create_database(f"import_ready_{name}") if postgres is not None else None

    servers: list[Server] = []
    with ScriptedOpenAIServer() as model:
        try:
            servers.append(Server("this", None, model.base_url, database("this")))
            if args.before is not None:
                servers.append(Server("before", args.before.resolve(), model.base_url, database("before")))
            for server in servers:
                server.import_once(-1)  # warm: the first import loads the tokenizer and prepares statements
            medians: dict[str, list[float]] = {server.name: [] for server in servers}
            count = 0
            for round_ in range(args.rounds):
                for server in servers if round_ % 2 == 0 else reversed(servers):
                    times = []
                    for _ in range(args.imports):
                        times.append(server.import_once(count))
                        count += 1
                    medians[server.name].append(statistics.median(times))
                    print(
                        f"round {round_ + 1} {server.name:6} import → ready: median "
                        f"{statistics.median(times) * 1000:7.1f} ms, max {max(times) * 1000:7.1f} ms",
                        flush=True,
                    )
        finally:
            for server in servers:
                server.stop()
            if postgres is not None:
                postgres.stop()
    for name, values in medians.items():
        print(f"{name:6} medians of rounds (ms): {' / '.join(f'{v * 1000:.1f}' for v in values)}")
    if "before" in medians:
        ratios = sorted(a / b for a, b in zip(medians["this"], medians["before"], strict=True))
        print(f"this / before, min / median / max: {' / '.join(f'{r:.3f}' for r in ratios)}")
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
