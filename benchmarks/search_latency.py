"""Search latency p50/p95 per mode over 100k synthetic chunks, on SQLite and embedded PostgreSQL.

Run: ``.venv/bin/python benchmarks/search_latency.py [--chunks 100000] [--queries 200] [--backend sqlite]``
(the same as ``fathom bench search-latency``; the work is in :mod:`fathom.bench.search_latency`).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from fathom.cli import app  # noqa: E402

if __name__ == "__main__":
    app(["bench", "search-latency", *sys.argv[1:]])
