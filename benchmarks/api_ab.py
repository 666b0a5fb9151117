"""Before / after for the chat hot path: two ``fathom serve`` processes, one on another checkout's code.

    .venv/bin/python benchmarks/api_ab.py --before /path/to/other/checkout [--mode json|sse]
        [--target no-model|chat|continued|chat-id] [--requests 600] [--rounds 4] [--ttfe 200]
        [--backend sqlite|postgres]

Both servers (and their scripted model servers) start together, as in ``benchmarks/api.py``; the
``--before`` one runs with ``PYTHONPATH=<checkout>/src`` (a ``git worktree`` of the older commit, no
install needed). ``--backend postgres``: each server on a database of its own on one embedded PostgreSQL
started for the run (the database's own CPU is in neither figure). Each round sends the same closed loop
(8 clients, ``--requests`` chats, each under a new chat id; ``continued``: each client continuing its own
chat of 20 prior turns, as in ``benchmarks/api.py``; ``chat-id``: the chat app, each request a new chat
under a ``chatId`` the client chose, as the console's first turn sends it) to one and then the other, the
order alternating by round; what counts is each server's CPU time over its share (utime + stime from
``/proc``). Prints requests per server CPU-second per round and min / median / max of the after / before
ratios.

With ``--ttfe N`` each round measures time to first event instead (issue 33's measure: request sent
→ first complete SSE frame, one stream at a time): ``N`` times, one stream to each of the bare FastAPI
endpoint, the before server, the after server and the scripted model server itself (its own time to
first frame, which every chat app's figure includes and no bare endpoint has), in an order rotated by
one each time. Prints each one's p50 per round, each server's p50 minus the bare endpoint's and after
minus before, per round. ``--model-delay-ms`` makes the scripted model sleep before each chunk (a
model that keeps its client waiting without competing for this machine's CPU, as a remote one does).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
import api  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="a checkout of the older code")
    parser.add_argument("--mode", choices=("json", "sse"), default="json")
    parser.add_argument("--target", choices=("no-model", "chat", "continued", "chat-id"), default="no-model")
    parser.add_argument("--requests", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--model-delay-ms", type=float, default=0.0, help="slept before each model chunk")
    parser.add_argument("--ttfe", type=int, help="measure time to first event: sequential streams per round")
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    args = parser.parse_args()
    source = args.before.resolve() / "src"
    if not (source / "fathom").is_dir():
        parser.error(f"--before: {args.before} has no src/fathom (give a checkout of this repository)")
    delay = args.model_delay_ms
    postgres: Any = None
    if args.backend == "postgres":
        from fathom.store.pg_embedded import EmbeddedPostgres

        postgres = EmbeddedPostgres()
        postgres.start()

    def database(name: str) -> str | None:
        return postgres.create_database(f"api_ab_{name}") if postgres is not None else None

    servers = [
        api.start_servers_with({"PYTHONPATH": str(source)}, database("before"), model_delay_ms=delay),
        api.start_servers_with({}, database("after"), model_delay_ms=delay),
    ]
    try:
        index = {"no-model": 1, "chat": 2, "continued": 3, "chat-id": 4}[args.target]
        seeding = argparse.Namespace(clients=8, streams=8)  # the continued-chat target seeds 8 chats
        targets = [api.targets_of(s, seeding)[index] for s in servers]
        if args.ttfe:
            return ttfe_rounds(servers, targets, args.ttfe, args.rounds)
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
        if postgres is not None:
            postgres.stop()


def ttfe_rounds(servers: list[api.Servers], targets: list[api.Target], count: int, rounds: int) -> None:
    """p50 time to first event per round of the bare endpoint, before, after and the model server: one
    stream to each in turn (the order rotated by one each time), ``count`` times a round, so that load
    from other processes falls on all four alike."""
    path = "/api/v1/chat/completions"
    bare = api.Target(api.BARE, servers[1].bare_url + path, {"messages": []}, servers[1].bare)
    named = {"bare": bare, "before": targets[0], "after": targets[1], "model": api.model_target(servers[1])}
    p50: dict[str, list[float]] = {name: [] for name in named}

    async def measure() -> None:
        clients = {name: httpx.AsyncClient(timeout=60) for name in named}
        try:
            order = list(named)
            for name in order:  # connections up, caches warm
                for _ in range(20):
                    await api.one_request(clients[name], named[name], True)
            for _ in range(rounds):
                firsts: dict[str, list[float]] = {name: [] for name in named}
                for number in range(count):
                    turn = order[number % len(order) :] + order[: number % len(order)]
                    for name in turn:
                        first, _ = await api.one_request(clients[name], named[name], True)
                        firsts[name].append(first)
                for name in named:
                    p50[name].append(api.p50_ms(firsts[name]))
        finally:
            for client in clients.values():
                await client.aclose()

    asyncio.run(measure())
    for name in named:
        print(f"{name:6} TTFE p50 ms: {' / '.join(f'{v:.2f}' for v in p50[name])}")
    for name in ("before", "after"):
        minus = [v - b for v, b in zip(p50[name], p50["bare"], strict=True)]
        print(f"{name:6} minus bare, ms: {' / '.join(f'{v:.2f}' for v in minus)} ({api.spread(minus)})")
    change = [a - b for a, b in zip(p50["after"], p50["before"], strict=True)]
    print(f"after minus before, ms: {api.spread(change)} (min / median / max)")


if __name__ == "__main__":
    main()
