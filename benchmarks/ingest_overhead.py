"""The CPU ingestion spends besides the embedding model, on ``ingest_throughput``'s document.

    .venv/bin/python benchmarks/ingest_overhead.py [--docs 300] [--runs 6]

The model is replaced by a stub (every text gets the same unit vector; the writes of 384-dimensional
vectors are unchanged), so what is left is the pipeline's own work: parse, chunk, index texts, token
counts, full-text segmentation, the transactional writes and the job bookkeeping. Each run ingests the
document into a fresh knowledge base of the same process, one worker until idle, and prints this
process's CPU time (``time.process_time``) and the event loop thread's (``time.thread_time``). The first
run pays the process's first-use costs; read the others. To compare two trees, alternate processes of
each (``PYTHONPATH=<tree>/src``).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from ingest_throughput import SCIFACT, long_document

from fathom.config import Settings
from fathom.llm.local_embedding import LOCAL_EMBEDDING_DIMENSIONS, LOCAL_EMBEDDING_MODEL_ID, LocalEmbedder
from fathom.platform import Platform


def _stub(self: LocalEmbedder, texts: Sequence[str]) -> list[list[float]]:
    return [[1.0] + [0.0] * (LOCAL_EMBEDDING_DIMENSIONS - 1) for _ in texts]


async def run(text: str, runs: int) -> None:
    LocalEmbedder.embed_sync = _stub  # type: ignore[method-assign]
    with tempfile.TemporaryDirectory(prefix="fathom-ingest-overhead-") as tmp:
        platform = Platform.build(Settings(data_dir=Path(tmp), workers=0, seed_demo=False))
        team_id = (await platform.prepare()).team_id
        try:
            for number in range(runs):
                dataset = await platform.datasets.create_dataset(
                    team_id, f"overhead {number}", vector_model=LOCAL_EMBEDDING_MODEL_ID
                )
                collection = await platform.datasets.create_collection(
                    team_id, dataset.id, "long", type="virtual", raw_text=text
                )
                await platform.ingestion.enqueue(collection)
                cpu, loop_cpu = time.process_time(), time.thread_time()
                await platform.new_worker().run_until_idle()
                cpu, loop_cpu = time.process_time() - cpu, time.thread_time() - loop_cpu
                done = await platform.datasets.get_collection(team_id, collection.id)
                print(
                    f"run {number + 1}: {done.chunks_done} chunks, CPU {cpu:.2f} s "
                    f"(event loop thread {loop_cpu:.2f} s)",
                    flush=True,
                )
        finally:
            await platform.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=300)
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument("--dataset", type=Path, default=SCIFACT)
    args = parser.parse_args()
    asyncio.run(run(long_document(args.dataset, args.docs), args.runs))


if __name__ == "__main__":
    main()
