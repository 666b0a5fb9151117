"""DNS pinning keeps TLS honest: the connection goes to the checked IP, SNI and verification use the name."""

from __future__ import annotations

import ssl
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from egress_support import LoopbackServer, Received, Reply, make_certificates

from fathom.security import EgressGuard, EgressPolicy, StaticResolver


@pytest.fixture(scope="module")
def tls_server() -> Iterator[tuple[LoopbackServer, ssl.SSLContext, list[str]]]:
    with tempfile.TemporaryDirectory() as tmp:
        ca_file, cert_file, key_file = make_certificates(Path(tmp), "tls.test")
        server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        server_context.load_cert_chain(cert_file, key_file)
        sni_seen: list[str] = []

        def remember_sni(sock: ssl.SSLObject, name: str | None, context: ssl.SSLContext) -> None:
            sni_seen.append(name or "")

        server_context.sni_callback = remember_sni  # type: ignore[assignment]
        client_context = ssl.create_default_context(cafile=str(ca_file))

        def route(request: Received) -> Reply:
            return Reply(200, {}, b"secure hello")

        server = LoopbackServer(route, tls=server_context)
        with server:
            yield server, client_context, sni_seen


async def test_https_to_a_pinned_ip_verifies_the_certificate_against_the_host_name(
    tls_server: tuple[LoopbackServer, ssl.SSLContext, list[str]],
) -> None:
    server, client_context, sni_seen = tls_server
    guard = EgressGuard(
        EgressPolicy(allow_hosts=["tls.test"]), resolver=StaticResolver({"tls.test": ["127.0.0.1"]})
    )
    async with guard.client(verify=client_context) as client:
        response = await client.get(f"https://tls.test:{server.port}/")
    assert response.text == "secure hello"
    assert "tls.test" in sni_seen
    assert server.received[-1].headers["host"] == f"tls.test:{server.port}"


async def test_https_with_a_certificate_for_another_name_fails_verification(
    tls_server: tuple[LoopbackServer, ssl.SSLContext, list[str]],
) -> None:
    server, client_context, _ = tls_server
    guard = EgressGuard(
        EgressPolicy(allow_hosts=["wrong.test"]), resolver=StaticResolver({"wrong.test": ["127.0.0.1"]})
    )
    before = len(server.received)
    async with guard.client(verify=client_context) as client:
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED|hostname"):
            await client.get(f"https://wrong.test:{server.port}/")
    assert len(server.received) == before
