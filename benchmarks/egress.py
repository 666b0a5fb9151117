"""Egress guard overhead: guarded client vs plain ``httpx.AsyncClient`` against a loopback server.

Run: ``.venv/bin/python benchmarks/egress.py [--requests 2000] [--rounds 5]``

The server runs in a child process (a minimal asyncio HTTP/1.1 keep-alive responder) so its work is
not billed to the client. Each round sends the same number of sequential GET requests with each client
(order rotated per round); the per-request figure is the median over rounds. Three guarded variants:
an IP-literal URL (no resolver call), a host name answered by a static resolver (a resolver call per
request, as with a warm DNS cache), and ``check_url`` alone without any network.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import httpx  # noqa: E402

from fathom.security import EgressGuard, EgressPolicy, StaticResolver  # noqa: E402

RESPONSE = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok"


class _Responder(asyncio.Protocol):
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.buffer = b""

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while b"\r\n\r\n" in self.buffer:
            _, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
            self.transport.write(RESPONSE)  # type: ignore[attr-defined]


def _serve(port_queue: multiprocessing.Queue[int]) -> None:
    async def main() -> None:
        server = await asyncio.get_running_loop().create_server(_Responder, "127.0.0.1", 0)
        port_queue.put(server.sockets[0].getsockname()[1])
        await server.serve_forever()

    asyncio.run(main())


async def _time(requests: int, call: Callable[[], Awaitable[object]]) -> float:
    """Seconds per call, after a short warm-up."""
    for _ in range(20):
        await call()
    start = time.perf_counter()
    for _ in range(requests):
        await call()
    return (time.perf_counter() - start) / requests


async def run(port: int, requests: int, rounds: int) -> dict[str, float]:
    policy = EgressPolicy(allow_cidrs=["127.0.0.1/32"], allow_hosts=["bench.test"])
    guard = EgressGuard(policy, resolver=StaticResolver({"bench.test": ["127.0.0.1"]}))
    literal = f"http://127.0.0.1:{port}/"
    named = f"http://bench.test:{port}/"
    results: dict[str, list[float]] = {"plain": [], "guarded_ip": [], "guarded_name": [], "check_url": []}
    async with httpx.AsyncClient() as plain, guard.client() as guarded:

        async def plain_get() -> object:
            return await plain.get(literal)

        async def guarded_ip() -> object:
            return await guarded.get(literal)

        async def guarded_name() -> object:
            return await guarded.get(named)

        async def check_only() -> object:
            return await guard.check_url(named)

        cases = [("plain", plain_get), ("guarded_ip", guarded_ip), ("guarded_name", guarded_name)]
        for index in range(rounds):
            shift = index % len(cases)
            for name, call in cases[shift:] + cases[:shift]:
                results[name].append(await _time(requests, call))
            results["check_url"].append(await _time(requests, check_only))
    return {name: statistics.median(values) for name, values in results.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    ports: multiprocessing.Queue[int] = multiprocessing.Queue()
    server = multiprocessing.Process(target=_serve, args=(ports,), daemon=True)
    server.start()
    try:
        port = ports.get(timeout=10)
        medians = asyncio.run(run(port, args.requests, args.rounds))
    finally:
        server.terminate()
        server.join()
    plain = medians["plain"]
    print(f"requests per round: {args.requests}, rounds: {args.rounds} (median of rounds)")
    print(f"{'plain httpx.AsyncClient':<34} {plain * 1e6:9.1f} us/request")
    for key, label in (
        ("guarded_ip", "guarded client, IP literal"),
        ("guarded_name", "guarded client, name + resolver"),
    ):
        value = medians[key]
        print(
            f"{label:<34} {value * 1e6:9.1f} us/request  "
            f"(+{(value - plain) * 1e6:.1f} us, ratio {value / plain:.2f})"
        )
    print(f"{'check_url alone (no network)':<34} {medians['check_url'] * 1e6:9.1f} us/call")


if __name__ == "__main__":
    main()
