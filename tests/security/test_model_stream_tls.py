"""The streaming model client over TLS: the certificate checked against the endpoint's name, the SSE
answer read through the connection's byte pipe, and the kept-alive TLS connection used again."""

from __future__ import annotations

import json
import ssl
import tempfile
from pathlib import Path

import pytest
from egress_support import LoopbackServer, Received, Reply, make_certificates

from fathom.llm.errors import EndpointUnreachable
from fathom.llm.http_stream import StreamingEndpoint


def _sse(words: list[str]) -> list[bytes]:
    chunks = [{"id": "t1", "choices": [{"index": 0, "delta": {"content": word}}]} for word in words]
    return [f"data: {json.dumps(chunk)}\n\n".encode() for chunk in chunks] + [b"data: [DONE]\n\n"]


async def test_a_streamed_answer_over_tls_comes_whole_and_the_connection_is_used_again() -> None:
    words = [f"w{n} " for n in range(2_000)]
    with tempfile.TemporaryDirectory() as tmp:
        ca_file, cert_file, key_file = make_certificates(Path(tmp), "localhost")
        server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        server_context.load_cert_chain(cert_file, key_file)
        trusted = ssl.create_default_context(cafile=str(ca_file))

        def route(request: Received) -> Reply:
            return Reply(200, {"Content-Type": "text/event-stream"}, chunks=_sse(words))

        with LoopbackServer(route, tls=server_context) as server:
            endpoint = StreamingEndpoint(
                f"https://localhost:{server.port}/v1",
                headers={"Authorization": "Bearer k"},
                connect_timeout=5,
                read_timeout=5,
                ssl_context=lambda: trusted,
            )
            for _ in range(2):
                response = await endpoint.post_sse("/chat/completions", {"model": "m", "stream": True})
                texts = [event["choices"][0]["delta"]["content"] async for event in response.events()]
                await response.aclose()
                assert "".join(texts) == "".join(words)
            await endpoint.aclose()
            assert [r.path for r in server.received] == ["/v1/chat/completions"] * 2
            assert len(set(server.client_ports)) == 1  # one TLS connection, kept alive

            untrusting = StreamingEndpoint(
                f"https://localhost:{server.port}/v1",
                headers={},
                connect_timeout=5,
                read_timeout=5,
                ssl_context=ssl.create_default_context,  # the system's CAs: not the test CA
            )
            with pytest.raises(EndpointUnreachable, match="CERTIFICATE_VERIFY_FAILED"):
                await untrusting.post_sse("/chat/completions", {"model": "m", "stream": True})
            await untrusting.aclose()
