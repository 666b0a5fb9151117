"""Resident memory of ``fathom serve`` while it ingests the demo knowledge base (this repository's
``docs/``) and then 20 long documents, and after it goes idle again.

    .venv/bin/python benchmarks/serve_memory.py [--documents 20] [--kib 40] [--idle 15]

Starts one ``fathom serve`` (fresh SQLite data dir, the demo seeded on first start, the default
``FATHOM_WORKERS``, the local embedding model) on a loopback port and samples the server process's
``VmRSS`` and ``VmHWM`` (peak) from ``/proc`` every 0.2 s. Phases: started (first HTTP answer), demo
ingested (every demo collection ready), long documents ingested (``--documents`` text imports of
``--kib`` KiB of English prose each, posted at once to a second knowledge base), then idle (``--idle``
seconds with nothing to do). Prints one Markdown table row per phase.
"""

from __future__ import annotations

import argparse
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
VOCABULARY = (
    "the a of and to in is was for on that with as by at from it this be are or an which their has "
    "device battery warranty parcel shipping refund customer order account password network server "
    "update install configure model search document chapter section table figure result measure value "
    "engineer report support machine memory process thread request answer question knowledge base"
)
WORDS = VOCABULARY.split()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def long_document(seed: int, kib: int) -> str:
    """Deterministic English-like prose of about ``kib`` KiB in paragraphs of 3–8 sentences."""
    rng = random.Random(seed)
    paragraphs: list[str] = []
    size = 0
    while size < kib * 1024:
        sentences = []
        for _ in range(rng.randint(3, 8)):
            words = [rng.choice(WORDS) for _ in range(rng.randint(8, 24))]
            sentences.append(" ".join(words).capitalize() + ".")
        paragraph = " ".join(sentences)
        paragraphs.append(paragraph)
        size += len(paragraph) + 2
    return "\n\n".join(paragraphs)


class Sampler:
    """VmRSS / VmHWM of one process, sampled in a thread."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak_mib = 0.0
        self.last_mib = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def read(self) -> tuple[float, float]:
        values: dict[str, float] = {}
        with open(f"/proc/{self.pid}/status") as status:
            for line in status:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    key, amount, _unit = line.split()
                    values[key] = int(amount) / 1024
        return values.get("VmRSS:", 0.0), values.get("VmHWM:", 0.0)

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            try:
                rss, hwm = self.read()
            except OSError:
                return
            self.last_mib = rss
            self.peak_mib = max(self.peak_mib, rss, hwm)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)


def ok(response: httpx.Response) -> Any:
    response.raise_for_status()
    body = response.json()
    assert body.get("code") == 200, body
    return body["data"]


def wait_ready(client: httpx.Client, dataset_id: str, timeout: float) -> int:
    """Wait until every collection of the dataset is ready (or failed); returns the chunk count."""
    deadline = time.monotonic() + timeout
    while True:
        listing = ok(
            client.post(
                "/api/core/dataset/collection/listV2", json={"datasetId": dataset_id, "pageSize": 100}
            )
        )
        items = listing["list"]
        if items and all(item["status"] in ("ready", "error") for item in items):
            return sum(int(item["dataAmount"]) for item in items)
        if time.monotonic() > deadline:
            raise TimeoutError(f"ingestion of {dataset_id} did not finish in {timeout:.0f} s")
        time.sleep(0.5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=20)
    parser.add_argument("--kib", type=int, default=40, help="size of each long document")
    parser.add_argument("--idle", type=float, default=15, help="seconds idle before the last sample")
    parser.add_argument("--timeout", type=float, default=1800)
    args = parser.parse_args()

    data_dir = Path(tempfile.mkdtemp(prefix="fathom-mem-"))
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("FATHOM_")}
    env.update(
        FATHOM_DATA_DIR=str(data_dir),
        FATHOM_PORT=str(port),
        FATHOM_LOG_LEVEL="warning",
        FATHOM_SEED_DEMO="true",
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "fathom", "serve"],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    admin_key = ""
    for line in proc.stdout:
        if line.strip().startswith("fathom-"):
            admin_key = line.strip()
        if line.startswith("Fathom "):
            break
    sampler = Sampler(proc.pid)
    rows: list[tuple[str, float, float, float]] = []
    started = time.monotonic()

    def mark(phase: str) -> None:
        rss, _ = sampler.read()
        rows.append((phase, time.monotonic() - started, rss, sampler.peak_mib))
        print(f"{phase}: RSS {rss:.0f} MiB, peak so far {sampler.peak_mib:.0f} MiB", flush=True)

    try:
        headers = {"Authorization": f"Bearer {admin_key}"}
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=30) as client:
            deadline = time.monotonic() + 60
            while True:
                try:
                    datasets = ok(client.post("/api/core/dataset/list", json={}))
                    break
                except httpx.TransportError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)
            mark("started (demo ingestion queued)")
            demo_chunks = sum(wait_ready(client, d["_id"], args.timeout) for d in datasets)
            mark(f"demo knowledge base ingested ({demo_chunks} chunks)")
            dataset_id = ok(client.post("/api/core/dataset/create", json={"name": "Long documents"}))
            for index in range(args.documents):
                body = {
                    "datasetId": dataset_id,
                    "name": f"doc-{index}",
                    "text": long_document(index, args.kib),
                }
                ok(client.post("/api/core/dataset/collection/create/text", json=body))
            chunks = wait_ready(client, dataset_id, args.timeout)
            mark(f"{args.documents} long documents ({args.kib} KiB each) ingested ({chunks} chunks)")
            time.sleep(args.idle)
            mark(f"idle {args.idle:.0f} s later")
    finally:
        sampler.stop()
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()

    print()
    print(f"load average at the end: {' '.join(f'{v:.1f}' for v in os.getloadavg())}")
    print("| phase | seconds | RSS MiB | peak RSS so far MiB |")
    print("|---|---|---|---|")
    for phase, seconds, rss, peak in rows:
        print(f"| {phase} | {seconds:.0f} | {rss:.0f} | {peak:.0f} |")


if __name__ == "__main__":
    main()
