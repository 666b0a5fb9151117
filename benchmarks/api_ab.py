"""Before / after for the chat hot path: two ``fathom serve`` processes, one on another checkout's code.

    .venv/bin/python benchmarks/api_ab.py --before /path/to/other/checkout [--mode json|sse]
        [--target no-model|chat|continued] [--requests 600] [--rounds 4]

Both servers (and their scripted model servers) start together, as in ``benchmarks/api.py``; the
``--before`` one runs with ``PYTHONPATH=<checkout>/src`` (a ``git worktree`` of the older commit, no
install needed). Each round sends the same closed loop (8 clients, ``--requests`` chats, each under a
new chat id; ``continued``: each client continuing its own chat of 20 prior turns, as in
``benchmarks/api.py``) to one and then the other, the order alternating by round; what counts is each
server's CPU time over its share (utime + stime from ``/proc``). Prints requests per server CPU-second
per round and min / median / max of the after / before ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import api  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="a checkout of the older code")
    parser.add_argument("--mode", choices=("json", "sse"), default="json")
    parser.add_argument("--target", choices=("no-model", "chat", "continued"), default="no-model")
    parser.add_argument("--requests", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    source = args.before.resolve() / "src"
    if not (source / "fathom").is_dir():
        parser.error(f"--before: {args.before} has no src/fathom (give a checkout of this repository)")
    servers = [api.start_servers_with({"PYTHONPATH": str(source)}), api.start_servers_with({})]
    try:
        index = {"no-model": 1, "chat": 2, "continued": 3}[args.target]
        seeding = argparse.Namespace(clients=8, streams=8)  # the continued-chat target seeds 8 chats
        targets = [api.targets_of(s, seeding)[index] for s in servers]
        stream = args.mode == "sse"
        for target in targets:  # warm up
            asyncio.run(api.closed_loop(target, stream=stream, clients=8, requests=200))
        rates: list[list[float]] = [[], []]
        for number in range(args.rounds):
            for which in (0, 1) if number % 2 == 0 else (1, 0):
                share = asyncio.run(
                    api.closed_loop(targets[which], stream=stream, clients=8, requests=args.requests)
                )
                rates[which].append(share.per_cpu_second)
        for name, values in zip(("before", "after"), rates, strict=True):
            rounds = " / ".join(f"{v:.0f}" for v in values)
            print(
                f"{name:6} requests per server CPU-second: {rounds} (median {statistics.median(values):.0f})"
            )
        ratios = [after / before for before, after in zip(rates[0], rates[1], strict=True)]
        print(
            f"after / before: {min(ratios):.3f} / {statistics.median(ratios):.3f} / {max(ratios):.3f}"
            " (min / median / max)"
        )
    finally:
        for s in servers:
            s.stop()


if __name__ == "__main__":
    main()
