"""The garbage-collector setting of a serving process (``fathom serve``, ``fathom worker``, and the
search benchmark, which measures what a served request costs)."""

from __future__ import annotations

import gc

GC_YOUNG_THRESHOLD = 20_000


def tune_garbage_collector() -> tuple[int, int, int]:
    """Move everything built at start (modules, models, tokenizers: ~150k objects) out of the garbage
    collector's full passes, and collect the young generation less often; returns the thresholds it
    replaced.

    Start-up objects live as long as the process, and a full pass over them took ~80 ms on the 2-core
    machine, landing on one request in a few dozen as a latency spike. A chat request allocates a few
    thousand containers; at the default threshold (700) that is a young-generation pass every few
    hundred microseconds of work. 20,000 makes them rare (+14 % chat requests per server CPU-second, an
    interleaved A/B as benchmarks/api_ab.py runs it) for a few megabytes of garbage kept a little longer.
    """
    gc.collect()
    gc.freeze()
    previous = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, 50, 100)
    return previous
