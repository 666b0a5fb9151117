"""DNS pinning keeps TLS honest: the connection goes to the checked IP, SNI and verification use the name."""

from __future__ import annotations

import datetime
import ssl
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from egress_support import LoopbackServer, Received, Reply

from fathom.security import EgressGuard, EgressPolicy, StaticResolver


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _certificates(tmp: Path, dns_name: str) -> tuple[Path, Path, Path]:
    """A throw-away CA and a server certificate for ``dns_name`` signed by it (PEM files)."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("fathom test CA"))
        .issuer_name(_name("fathom test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (
        x509.CertificateBuilder()
        .subject_name(_name(dns_name))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(dns_name)]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    ca_file, cert_file, key_file = tmp / "ca.pem", tmp / "cert.pem", tmp / "key.pem"
    ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_file.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return ca_file, cert_file, key_file


@pytest.fixture(scope="module")
def tls_server() -> Iterator[tuple[LoopbackServer, ssl.SSLContext, list[str]]]:
    with tempfile.TemporaryDirectory() as tmp:
        ca_file, cert_file, key_file = _certificates(Path(tmp), "tls.test")
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
