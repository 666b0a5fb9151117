"""The SSRF vectors of ../shared/datasets/ssrf-vectors/vectors.jsonl, each answered by a stub resolver.

Every vector is run twice: through ``guard.check_url`` (the verdict) and through the guarded client
over a network backend that records where it would connect and refuses (no packet leaves the process):
a blocked vector must never reach the socket layer, an allowed one must reach exactly the checked IP.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from egress_support import RefusingBackend, SequenceResolver

from fathom.security import EgressDenied, EgressGuard, EgressPolicy, StaticResolver
from fathom.security.egress import Resolver

VECTORS_FILE = Path(__file__).parents[2] / ".." / "shared" / "datasets" / "ssrf-vectors" / "vectors.jsonl"


def _load() -> list[dict[str, Any]]:
    if not VECTORS_FILE.exists():
        print(f"SSRF vectors not found at {VECTORS_FILE}; skipping the vector table")
        return []
    return [
        json.loads(line) for line in VECTORS_FILE.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


VECTORS = _load()


def _resolver(vector: dict[str, Any]) -> tuple[Resolver, list[str]]:
    """A stub resolver answering the vector's ``dns_fixture`` (``a then b`` = one answer per call)."""
    fixture = vector["dns_fixture"]
    host = httpx.URL(vector["url"]).host if fixture else ""
    if fixture is None:
        static = StaticResolver({})
        return static, static.calls
    answers = [[part.strip()] for part in fixture.split(" then ")]
    if len(answers) == 1:
        static = StaticResolver({host: answers[0]})
        return static, static.calls
    sequence = SequenceResolver(answers)
    return sequence, sequence.calls


def _expected_address(vector: dict[str, Any]) -> str:
    if vector["numeric_connects_to"]:
        return str(vector["numeric_connects_to"])
    return str(vector["dns_fixture"]).split(" then ")[0]


@pytest.mark.skipif(not VECTORS, reason="../shared/datasets/ssrf-vectors/vectors.jsonl is absent")
@pytest.mark.parametrize("vector", VECTORS, ids=[f"{i:02d}-{v['category']}" for i, v in enumerate(VECTORS)])
async def test_ssrf_vector_verdict_holds(vector: dict[str, Any]) -> None:
    resolver, calls = _resolver(vector)
    guard = EgressGuard(EgressPolicy(), resolver=resolver)
    if vector["expect"] == "block":
        with pytest.raises(EgressDenied):
            await guard.check_url(vector["url"])
    elif vector["expect"] == "allow":
        assert await guard.check_url(vector["url"]) == [_expected_address(vector)]
    elif vector["expect"] == "never-connect-to-second-answer":
        first = _expected_address(vector)
        assert await guard.check_url(vector["url"]) == [first]
        assert len(calls) == 1
    else:  # pragma: no cover - a new verdict in the data set must be handled explicitly
        pytest.fail(f"unknown expectation {vector['expect']!r}")


@pytest.mark.skipif(not VECTORS, reason="../shared/datasets/ssrf-vectors/vectors.jsonl is absent")
@pytest.mark.parametrize("vector", VECTORS, ids=[f"{i:02d}-{v['category']}" for i, v in enumerate(VECTORS)])
async def test_ssrf_vector_connection_goes_only_to_checked_address(vector: dict[str, Any]) -> None:
    resolver, calls = _resolver(vector)
    backend = RefusingBackend()
    guard = EgressGuard(EgressPolicy(), resolver=resolver)
    async with guard.client(network_backend=backend) as client:
        if vector["expect"] == "block":
            with pytest.raises(EgressDenied):
                await client.get(vector["url"])
            assert backend.attempts == []
            return
        with pytest.raises(httpx.ConnectError):
            await client.get(vector["url"])
    url = httpx.URL(vector["url"])
    port = url.port or (443 if url.scheme == "https" else 80)
    assert backend.attempts == [(_expected_address(vector), port)]
    if vector["expect"] == "never-connect-to-second-answer":
        assert len(calls) == 1, "the name must be resolved once, and the connection pinned to that answer"
