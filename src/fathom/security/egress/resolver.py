"""Name resolution for the egress guard: the system resolver and a static one for tests and tools.

A resolver is any async callable ``host -> list[str]`` of IP address strings. It is called once per
request hop; the guard connects only to the addresses it returned and checked.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable, Iterable, Mapping

Resolver = Callable[[str], Awaitable[list[str]]]


async def system_resolver(host: str) -> list[str]:
    """Resolve A and AAAA records with the system resolver, off the event loop (``loop.getaddrinfo``)."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    addresses: list[str] = []
    for _family, _type, _proto, _canon, sockaddr in infos:
        address = str(sockaddr[0])
        if address not in addresses:
            addresses.append(address)
    return addresses


class StaticResolver:
    """Answers from a fixed table (host name → addresses); unknown names fail like NXDOMAIN.

    Records every name asked in ``calls``. Use it in tests and benchmarks: it never touches DNS.
    """

    def __init__(self, table: Mapping[str, Iterable[str]]) -> None:
        self._table = {name.lower().rstrip("."): list(addresses) for name, addresses in table.items()}
        self.calls: list[str] = []

    async def __call__(self, host: str) -> list[str]:
        self.calls.append(host)
        try:
            return list(self._table[host.lower().rstrip(".")])
        except KeyError:
            raise socket.gaierror(socket.EAI_NONAME, f"Name or service not known: {host}") from None
