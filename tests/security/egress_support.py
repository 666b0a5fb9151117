"""Helpers for the egress tests: real loopback HTTP servers and a network backend that never connects."""

from __future__ import annotations

import datetime
import ssl
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpcore
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@dataclass
class Received:
    """One request as the server saw it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Reply:
    """What a route answers; ``chunks`` are sent with chunked encoding (no Content-Length)."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    chunks: Iterable[bytes] | None = None


Route = Callable[[Received], Reply]


class LoopbackServer:
    """A threaded HTTP/1.1 server on a loopback address that records every request."""

    def __init__(
        self, route: Route, host: str = "127.0.0.1", port: int = 0, tls: ssl.SSLContext | None = None
    ) -> None:
        self.received: list[Received] = []
        self.client_ports: list[int] = []  # the client's port of each request: one per connection used
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                seen = Received(
                    method=self.command,
                    path=self.path,
                    headers={key.lower(): value for key, value in self.headers.items()},
                    body=body,
                )
                owner.received.append(seen)
                owner.client_ports.append(self.client_address[1])
                reply = route(seen)
                self.send_response(reply.status)
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                if reply.chunks is not None:
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    try:
                        for chunk in reply.chunks:
                            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                        self.wfile.write(b"0\r\n\r\n")
                    except (BrokenPipeError, ConnectionResetError):
                        self.close_connection = True
                    return
                if "Content-Length" not in reply.headers:
                    self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                if self.command != "HEAD":
                    try:
                        self.wfile.write(reply.body)
                    except (BrokenPipeError, ConnectionResetError):
                        self.close_connection = True

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _handle

        self._server = ThreadingHTTPServer((host, port), Handler)
        self._server.daemon_threads = True
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        self.host = host
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    def url(self, path: str = "/", host: str | None = None) -> str:
        return f"http://{host or self.host}:{self.port}{path}"

    def __enter__(self) -> LoopbackServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


@contextmanager
def serve(route: Route, host: str = "127.0.0.1", port: int = 0) -> Iterator[LoopbackServer]:
    """Run a :class:`LoopbackServer` for the duration of the block."""
    with LoopbackServer(route, host=host, port=port) as server:
        yield server


class RefusingBackend(httpcore.AsyncNetworkBackend):
    """Records where a connection would go and refuses it: no packet ever leaves the process."""

    def __init__(self) -> None:
        self.attempts: list[tuple[str, int]] = []

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        self.attempts.append((host, port))
        raise httpcore.ConnectError(f"test backend refuses {host}:{port}")

    async def sleep(self, seconds: float) -> None:
        return None


class SequenceResolver:
    """Returns the next answer on each call (the last one repeats): a DNS-rebinding stub."""

    def __init__(self, answers: list[list[str]]) -> None:
        self._answers = answers
        self.calls: list[str] = []

    async def __call__(self, host: str) -> list[str]:
        index = min(len(self.calls), len(self._answers) - 1)
        self.calls.append(host)
        return list(self._answers[index])


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def make_certificates(tmp: Path, dns_name: str) -> tuple[Path, Path, Path]:
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
