"""The guarded client against real loopback servers: redirects, credentials, sizes, pinning, timeouts."""

from __future__ import annotations

import asyncio
import errno
import gzip
import threading
from collections.abc import Iterator

import httpx
import pytest
from egress_support import LoopbackServer, Received, Reply, SequenceResolver, serve

from fathom.security import (
    EgressDenied,
    EgressGuard,
    EgressPolicy,
    EgressRedirectError,
    EgressSizeError,
    StaticResolver,
)
from fathom.security.egress import PinnedNetworkBackend
from fathom.security.egress.resolver import Resolver


def make_guard(resolver: Resolver | None = None, **policy: object) -> EgressGuard:
    return EgressGuard(EgressPolicy(**policy), resolver=resolver or StaticResolver({}))  # type: ignore[arg-type]


def ok(request: Received) -> Reply:
    return Reply(200, {"Content-Type": "text/plain"}, f"{request.method} {request.path}".encode())


# --- redirects to internal targets ------------------------------------------------------------------------


async def test_redirect_from_allow_listed_server_to_internal_address_is_blocked() -> None:
    with serve(ok, host="127.0.0.2") as internal:

        def route(request: Received) -> Reply:
            targets = {
                "/to-ip": internal.url("/secret"),
                "/to-name": f"http://internal.test:{internal.port}/secret",
                "/to-metadata": "http://169.254.169.254/latest/meta-data/",
            }
            return Reply(302, {"Location": targets[request.path]})

        with serve(route) as public:
            resolver = StaticResolver({"internal.test": ["127.0.0.2"]})
            guard = make_guard(resolver, allow_cidrs=["127.0.0.1/32"])
            async with guard.client() as client:
                with pytest.raises(EgressDenied) as info:
                    await client.get(public.url("/to-ip"))
                assert info.value.address == "127.0.0.2"
                assert "127.0.0.2/32" in str(info.value)
                with pytest.raises(
                    EgressDenied, match="internal.test resolves to a blocked address"
                ) as named:
                    await client.get(public.url("/to-name"))
                assert "127.0.0.2" not in str(named.value)
                with pytest.raises(EgressDenied, match="cloud metadata"):
                    await client.get(public.url("/to-metadata"))
    assert [r.path for r in public.received] == ["/to-ip", "/to-name", "/to-metadata"]
    assert internal.received == []


async def test_guarded_client_refuses_a_loopback_target_that_is_not_allow_listed() -> None:
    with serve(ok) as server:
        async with make_guard().client() as client:
            with pytest.raises(EgressDenied, match="FATHOM_EGRESS_ALLOW_CIDRS"):
                await client.get(server.url())
    assert server.received == []


# --- redirect limit and protocol --------------------------------------------------------------------------


def endless(request: Received) -> Reply:
    step = int(request.path.rsplit("/", 1)[-1])
    if step >= 100:
        return ok(request)
    return Reply(302, {"Location": f"/hop/{step + 1}"})


async def test_redirects_stop_after_five_hops_with_the_fastgpt_message() -> None:
    with serve(endless) as server:
        async with make_guard(allow_cidrs=["127.0.0.1/32"]).client() as client:
            with pytest.raises(EgressRedirectError) as info:
                await client.get(server.url("/hop/0"))
    assert str(info.value) == "Maximum redirects exceeded: 5"
    assert len(server.received) == 6  # the request and five followed redirects


async def test_five_redirects_are_followed_and_recorded_in_history() -> None:
    with serve(endless) as server:
        async with make_guard(allow_cidrs=["127.0.0.1/32"]).client() as client:
            response = await client.get(server.url("/hop/95"))
    assert response.status_code == 200
    assert response.text == "GET /hop/100"
    assert [r.status_code for r in response.history] == [302] * 5


async def test_per_request_redirect_limit_and_no_follow() -> None:
    with serve(endless) as server:
        async with make_guard(allow_cidrs=["127.0.0.1/32"]).client() as client:
            with pytest.raises(EgressRedirectError, match=r"^Maximum redirects exceeded: 2$"):
                await client.get(server.url("/hop/0"), extensions={"max_redirects": 2})
            response = await client.get(server.url("/hop/0"), follow_redirects=False)
    assert response.status_code == 302
    assert response.headers["location"] == "/hop/1"


@pytest.mark.parametrize(
    ("location", "protocol"),
    [("ftp://example.com/file", "ftp:"), ("file:///etc/passwd", "file:"), ("gopher://x:70/_", "gopher:")],
)
async def test_redirect_to_a_non_http_protocol_is_refused(location: str, protocol: str) -> None:
    with serve(lambda r: Reply(302, {"Location": location})) as server:
        async with make_guard(allow_cidrs=["127.0.0.1/32"]).client() as client:
            with pytest.raises(EgressRedirectError) as info:
                await client.get(server.url("/"))
    assert str(info.value) == f"Unsupported redirect protocol: {protocol}"


# --- method rewriting and credential stripping (spec §6.2) ------------------------------------------------


def redirecting(status: int) -> LoopbackServer:
    def route(request: Received) -> Reply:
        if request.path == "/start":
            return Reply(status, {"Location": "/final"})
        return ok(request)

    return LoopbackServer(route)


@pytest.mark.parametrize(
    ("status", "method", "next_method", "keeps_body"),
    [
        (301, "POST", "GET", False),
        (302, "POST", "GET", False),
        (303, "POST", "GET", False),
        (303, "PUT", "GET", False),
        (303, "DELETE", "GET", False),
        (301, "PUT", "PUT", True),
        (302, "PATCH", "PATCH", True),
        (307, "POST", "POST", True),
        (308, "PUT", "PUT", True),
    ],
)
async def test_redirect_method_and_body_rewriting(
    status: int, method: str, next_method: str, keeps_body: bool
) -> None:
    with redirecting(status) as server:
        async with make_guard(allow_cidrs=["127.0.0.1/32"]).client() as client:
            response = await client.request(
                method,
                server.url("/start"),
                content=b'{"q": 1}',
                headers={"Content-Type": "application/json", "Content-Language": "en", "X-Trace": "t1"},
            )
    assert response.status_code == 200
    first, second = server.received
    assert (first.method, first.body) == (method, b'{"q": 1}')
    assert second.method == next_method
    assert second.headers["x-trace"] == "t1"
    if keeps_body:
        assert second.body == b'{"q": 1}'
        assert second.headers["content-type"] == "application/json"
    else:
        assert second.body == b""
        assert not any(name.startswith("content-") for name in second.headers)


CREDENTIALS = {
    "Authorization": "Bearer s3cret",
    "Cookie": "sid=abc",
    "Proxy-Authorization": "Basic eA==",
    "X-Custom": "v",
}


async def test_cross_host_redirect_drops_credentials_and_keeps_other_headers() -> None:
    with serve(ok, host="127.0.0.2") as second:
        target = f"http://b.test:{second.port}/final"
        with serve(lambda r: Reply(307, {"Location": target})) as first:
            resolver = StaticResolver({"a.test": ["127.0.0.1"], "b.test": ["127.0.0.2"]})
            guard = make_guard(resolver, allow_hosts=["a.test", "b.test"])
            async with guard.client() as client:
                response = await client.post(
                    f"http://a.test:{first.port}/start", content=b"body", headers=CREDENTIALS
                )
    assert response.status_code == 200
    assert first.received[0].headers["authorization"] == "Bearer s3cret"
    (seen,) = second.received
    assert (seen.method, seen.body) == ("POST", b"body")
    assert seen.headers["host"] == f"b.test:{second.port}"
    assert seen.headers["x-custom"] == "v"
    for name in ("authorization", "cookie", "proxy-authorization"):
        assert name not in seen.headers


async def test_redirect_to_another_port_of_the_same_host_is_cross_host() -> None:
    with serve(ok) as second, serve(lambda r: Reply(302, {"Location": second.url("/final")})) as first:
        async with make_guard(allow_cidrs=["127.0.0.1/32"]).client() as client:
            await client.get(first.url("/start"), headers=CREDENTIALS)
    assert "authorization" not in second.received[0].headers
    assert "cookie" not in second.received[0].headers


async def test_same_host_redirect_keeps_credentials() -> None:
    with redirecting(302) as server:
        async with make_guard(allow_cidrs=["127.0.0.1/32"]).client() as client:
            await client.get(server.url("/start"), headers=CREDENTIALS)
    final = server.received[1]
    assert final.headers["authorization"] == "Bearer s3cret"
    assert final.headers["cookie"] == "sid=abc"


async def test_cookies_are_not_kept_between_requests() -> None:
    with serve(lambda r: Reply(200, {"Set-Cookie": "sid=leak; Path=/"}, b"x")) as server:
        async with make_guard(allow_cidrs=["127.0.0.1/32"]).client() as client:
            await client.get(server.url("/one"))
            await client.get(server.url("/two"))
    assert "cookie" not in server.received[1].headers


# --- size limit ------------------------------------------------------------------------------------------


def sized(request: Received) -> Reply:
    if request.path == "/chunked":
        return Reply(200, {}, chunks=[b"x" * 1000] * 10)
    if request.path == "/declared":
        return Reply(200, {}, b"y" * 10_000)
    return Reply(200, {}, b"z" * 100)


async def test_streamed_body_over_the_limit_raises_the_fastgpt_message() -> None:
    with serve(sized) as server:
        async with make_guard(allow_cidrs=["127.0.0.1/32"]).client(max_bytes=4096) as client:
            received = 0
            with pytest.raises(EgressSizeError) as info:
                async with client.stream("GET", server.url("/chunked")) as response:
                    async for chunk in response.aiter_bytes():
                        received += len(chunk)
    assert str(info.value) == "File exceeds maximum allowed size (4096 bytes)"
    assert received <= 4096


async def test_declared_length_over_the_limit_is_refused_before_reading() -> None:
    with serve(sized) as server:
        async with make_guard(allow_cidrs=["127.0.0.1/32"]).client(max_bytes=4096) as client:
            with pytest.raises(EgressSizeError, match=r"^File exceeds maximum allowed size \(4096 bytes\)$"):
                await client.get(server.url("/declared"))
            with pytest.raises(EgressSizeError, match=r"\(50 bytes\)"):
                await client.get(server.url("/small"), extensions={"max_bytes": 50})
            assert (await client.get(server.url("/small"))).content == b"z" * 100


async def test_buffered_body_over_the_limit_is_refused() -> None:
    with serve(sized) as server:
        async with make_guard(allow_cidrs=["127.0.0.1/32"], max_bytes=2500).client() as client:
            with pytest.raises(EgressSizeError, match=r"\(2500 bytes\)"):
                await client.get(server.url("/chunked"))


# --- DNS pinning -----------------------------------------------------------------------------------------


def twin_servers() -> Iterator[tuple[LoopbackServer, LoopbackServer]]:
    """Two servers on the same port, one on 127.0.0.1 and one on 127.0.0.2."""
    for _ in range(20):
        first = LoopbackServer(lambda r: Reply(200, {}, b"first"))
        try:
            second = LoopbackServer(lambda r: Reply(200, {}, b"second"), host="127.0.0.2", port=first.port)
        except OSError as exc:
            first.__exit__()
            if exc.errno != errno.EADDRINUSE:
                raise
            continue
        with first, second:
            yield first, second
        return
    pytest.skip("could not bind two loopback servers on one port")


@pytest.fixture
def twins() -> Iterator[tuple[LoopbackServer, LoopbackServer]]:
    yield from twin_servers()


async def test_connection_goes_to_the_checked_ip_even_if_dns_answers_differently_later(
    twins: tuple[LoopbackServer, LoopbackServer],
) -> None:
    first, second = twins
    resolver = SequenceResolver([["127.0.0.1"], ["127.0.0.2"]])
    guard = make_guard(resolver, allow_cidrs=["127.0.0.0/8"])
    async with guard.client() as client:
        response = await client.get(f"http://rebind.test:{first.port}/")
    assert response.text == "first"
    assert resolver.calls == ["rebind.test"]
    assert [r.headers["host"] for r in first.received] == [f"rebind.test:{first.port}"]
    assert second.received == []
    # The name now answers 127.0.0.2: a new check sees it, but nothing connects to an unchecked address.
    assert await guard.check_url(f"http://rebind.test:{first.port}/") == ["127.0.0.2"]


async def test_rebinding_to_metadata_after_the_check_never_reaches_the_second_answer(
    twins: tuple[LoopbackServer, LoopbackServer],
) -> None:
    first, _ = twins
    resolver = SequenceResolver([["127.0.0.1"], ["169.254.169.254"]])
    async with make_guard(resolver, allow_cidrs=["127.0.0.1/32"]).client() as client:
        assert (await client.get(f"http://rebind.test:{first.port}/")).text == "first"
        with pytest.raises(
            EgressDenied, match="rebind.test resolves to a blocked address; it is never allowed"
        ):
            await client.get(f"http://other-path.rebind.test:{first.port}/")


async def test_pinned_backend_refuses_a_connection_nobody_checked() -> None:
    with pytest.raises(EgressDenied, match="not checked by the egress guard"):
        await PinnedNetworkBackend().connect_tcp("127.0.0.1", 80)


# --- plain client behaviour ------------------------------------------------------------------------------


async def test_stream_is_an_async_context_manager_like_httpx() -> None:
    with serve(ok) as server:
        resolver = StaticResolver({"svc.test": ["127.0.0.1"]})
        async with make_guard(resolver, allow_hosts=["svc.test"]).client() as client:
            async with client.stream("GET", f"http://svc.test:{server.port}/s") as response:
                body = await response.aread()
            assert isinstance(client, httpx.AsyncClient)
    assert body == b"GET /s"
    assert server.received[0].headers["host"] == f"svc.test:{server.port}"


async def test_read_timeout_applies() -> None:
    release = threading.Event()

    def slow(request: Received) -> Reply:
        release.wait(5)
        return ok(request)

    with serve(slow) as server:
        try:
            async with make_guard(allow_cidrs=["127.0.0.1/32"], read_timeout=0.2).client() as client:
                with pytest.raises(httpx.ReadTimeout):
                    await client.get(server.url("/slow"))
        finally:
            release.set()


async def test_ambiguous_text_urls_are_refused_before_parsing() -> None:
    async with make_guard(allow_cidrs=["127.0.0.0/8"]).client() as client:
        with pytest.raises(EgressDenied, match="backslashes"):
            await client.get("http://127.1.1.1:80\\@127.2.2.2:80/")
        with pytest.raises(EgressDenied, match="Invalid URL"):
            await client.get("http://0177.00.00.01/")


async def test_concurrent_requests_each_connect_to_their_own_checked_address(
    twins: tuple[LoopbackServer, LoopbackServer],
) -> None:
    first, second = twins
    resolver = StaticResolver({"one.test": ["127.0.0.1"], "two.test": ["127.0.0.2"]})
    guard = make_guard(resolver, allow_hosts=["one.test", "two.test"])
    async with guard.client() as client:
        urls = [f"http://{name}:{first.port}/" for name in ("one.test", "two.test") * 10]
        responses = await asyncio.gather(*(client.get(url) for url in urls))
    assert [r.text for r in responses] == ["first", "second"] * 10
    assert {r.headers["host"] for r in first.received} == {f"one.test:{first.port}"}
    assert {r.headers["host"] for r in second.received} == {f"two.test:{first.port}"}


async def test_buffered_read_counts_decoded_bytes_so_a_gzip_bomb_stops_at_the_limit() -> None:
    bomb = gzip.compress(b"\0" * 1_000_000)
    assert len(bomb) < 4096

    def route(request: Received) -> Reply:
        return Reply(200, {"Content-Encoding": "gzip"}, bomb)

    with serve(route) as server:
        async with make_guard(allow_cidrs=["127.0.0.1/32"]).client(max_bytes=65536) as client:
            with pytest.raises(EgressSizeError, match=r"\(65536 bytes\)"):
                await client.get(server.url("/bomb"))
