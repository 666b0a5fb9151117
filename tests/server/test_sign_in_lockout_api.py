"""The sign-in lock-out under concurrency, through HTTP, on SQLite and PostgreSQL (issue 28 item 3).

- 40 parallel wrong passwords for one username: at most the limit (5) are evaluated (answered 401
  "wrong username or password"); every other one is refused before its password is checked (429).
- ``X-Forwarded-For`` from a client that is not a listed proxy changes nothing: every guess counts
  against the connection's own address. From a listed proxy (``FATHOM_TRUSTED_PROXIES``) it is the
  client's address, counted on its own.

The servers check passwords at the product's argon2 cost (64 MiB, 3 passes), not the suite's low one: the
guesses race each other while checks are as slow as in production.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from live_support import LiveServer, backend_database_url, free_port, start_live_server

from fathom.config import Settings

PER_USER = 5
PER_IP = 10
LOGIN = "/api/support/user/account/loginByPassword"


@dataclass
class Servers:
    direct: LiveServer  # believes no forwarded header
    behind_proxy: LiveServer  # loopback is its listed proxy


def _settings(root: Path, database_url: str, trusted: list[str]) -> Settings:
    return Settings(
        data_dir=root / "data",
        database_url=database_url,
        port=free_port(),
        workers=0,
        seed_demo=False,
        signin_max_failures_per_user=PER_USER,
        signin_max_failures_per_ip=PER_IP,
        trusted_proxies=trusted,
        password_hash_memory_kib=Settings.model_fields["password_hash_memory_kib"].default,
        password_hash_passes=Settings.model_fields["password_hash_passes"].default,
    )


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def servers(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    urls: list[str] = []
    roots = [tmp_path_factory.mktemp(f"lockout-{request.param}") for _ in range(2)]
    for index, root in enumerate(roots):
        urls.append(backend_database_url(request, f"lockout_{index}") or f"sqlite:///{root / 'fathom.db'}")
    for direct in start_live_server(_settings(roots[0], urls[0], [])):
        for behind_proxy in start_live_server(_settings(roots[1], urls[1], ["127.0.0.0/8"])):
            yield Servers(direct, behind_proxy)


def _attempts(
    server: LiveServer, bodies: list[dict[str, str]], addresses: list[str | None]
) -> list[httpx.Response]:
    """Every sign-in at once, each on its own connection (``addresses``: the X-Forwarded-For sent)."""

    async def all_at_once() -> list[httpx.Response]:
        limits = httpx.Limits(max_connections=len(bodies))
        async with httpx.AsyncClient(base_url=server.base_url, timeout=120, limits=limits) as client:
            return await asyncio.gather(
                *(
                    client.post(LOGIN, json=body, headers={"X-Forwarded-For": address} if address else {})
                    for body, address in zip(bodies, addresses, strict=True)
                )
            )

    return asyncio.run(all_at_once())


def _statuses(responses: list[httpx.Response]) -> dict[int, int]:
    counted: dict[int, int] = {}
    for response in responses:
        counted[response.status_code] = counted.get(response.status_code, 0) + 1
    return counted


def test_forty_parallel_wrong_passwords_evaluate_at_most_the_limit(servers: Servers) -> None:
    server = servers.direct
    guesses = [{"username": "root", "password": f"guess number {i}"} for i in range(40)]
    responses = _attempts(server, guesses, [None] * 40)
    statuses = _statuses(responses)
    assert set(statuses) <= {401, 429}, [r.text for r in responses if r.status_code not in (401, 429)]
    assert statuses.get(401, 0) <= PER_USER and statuses.get(429, 0) >= 40 - PER_USER, statuses
    refused = next(r for r in responses if r.status_code == 429)
    assert refused.json()["statusText"] == "tooManyRequests"
    assert "this username" in refused.json()["message"]
    assert 0 < int(refused.headers["retry-after"]) <= 900
    # the right password too, until the window ends
    assert server.boot.root_password
    with server.client() as client:
        right = client.post(LOGIN, json={"username": "root", "password": server.boot.root_password})
    assert right.status_code == 429, right.text


def test_a_spoofed_forwarded_for_from_an_untrusted_client_changes_nothing(servers: Servers) -> None:
    """Thirty names from thirty claimed addresses: all count against loopback, so at most PER_IP of
    them (fewer if the other test ran first) are evaluated."""
    guesses = [{"username": f"ghost{i}", "password": "whatever1"} for i in range(30)]
    claimed: list[str | None] = [f"198.51.100.{i}" for i in range(30)]
    responses = _attempts(servers.direct, guesses, claimed)
    statuses = _statuses(responses)
    assert set(statuses) <= {401, 429} and statuses.get(401, 0) <= PER_IP, statuses
    assert statuses.get(429, 0) >= 30 - PER_IP, statuses
    assert all("this address" in r.json()["message"] for r in responses if r.status_code == 429)


def test_a_listed_proxy_s_forwarded_for_is_the_client_address(servers: Servers) -> None:
    server = servers.behind_proxy
    # thirty clients behind the proxy, one guess each: none is locked out by the others
    guesses = [{"username": f"visitor{i}", "password": "whatever1"} for i in range(30)]
    claimed: list[str | None] = [f"203.0.113.{i}" for i in range(30)]
    assert _statuses(_attempts(server, guesses, claimed)) == {401: 30}
    # one client guessing many names is locked out by its own address, and only it
    guesses = [{"username": f"sprayed{i}", "password": "whatever1"} for i in range(PER_IP + 5)]
    responses = _attempts(server, guesses, ["192.0.2.66"] * len(guesses))
    statuses = _statuses(responses)
    assert statuses.get(401, 0) <= PER_IP and statuses.get(429, 0) >= 5, statuses
    assert all("this address" in r.json()["message"] for r in responses if r.status_code == 429)
    assert _statuses(_attempts(server, [{"username": "sprayed0", "password": "x" * 9}], ["192.0.2.67"])) == {
        401: 1
    }
