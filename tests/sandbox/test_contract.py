"""The FastGPT code contract (spec §6.8): main() / main(variables) / main(a, b) -> {codeReturn, log}."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from sandbox_limits import FAST

from fathom.sandbox import SandboxRunner
from fathom.sandbox.http import _client_request_handler

pytestmark = pytest.mark.usefixtures("isolated")


@pytest.fixture
def runner() -> SandboxRunner:
    return SandboxRunner(FAST)


@pytest.mark.parametrize(
    ("code", "variables", "expected"),
    [
        ("def main():\n    return {'x': 1}", {}, {"x": 1}),
        ("def main(variables):\n    return variables['a'] * 2", {"a": 21}, 42),
        ("def main(a, b):\n    return {'sum': a + b}", {"a": 1, "b": 2}, {"sum": 3}),
        ("def main(a, b=5):\n    return a + b", {"a": 1}, 6),
        ("def main():\n    return a + 1", {"a": 41}, 42),  # variables are injected as globals
        ("def main():\n    return None", {}, None),
        ("import json, math\ndef main():\n    return json.dumps({'p': math.floor(2.5)})", {}, '{"p": 2}'),
        ("from urllib.parse import quote\ndef main():\n    return quote('a b')", {}, "a%20b"),
        ("import statistics\ndef main():\n    return statistics.median([3, 1, 2])", {}, 2),
    ],
)
async def test_python_main_signatures(
    runner: SandboxRunner, code: str, variables: dict[str, Any], expected: Any
) -> None:
    result = await runner.run_python(code, variables)
    assert result.to_wire() == {"success": True, "data": {"codeReturn": expected, "log": ""}}


async def test_python_print_is_captured_as_log(runner: SandboxRunner) -> None:
    result = await runner.run_python("def main():\n    print('hello', 1)\n    print('world')\n    return 1")
    assert result.success and result.log == "hello 1\nworld"
    to_file = (
        "def main():\n"
        "    with open('out.txt', 'w') as f:\n"
        "        print('a', 'b', sep='-', file=f)\n"
        "    print('logged')\n"
        "    return open('out.txt').read()\n"
    )
    result = await runner.run_python(to_file)
    assert (result.code_return, result.log) == ("a-b\n", "logged")


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("def main(a, b):\n    return a", "Missing required argument: 'b'"),
        ("x = 1", "No 'main' function defined"),
        ("def main():\n    raise ValueError('boom')", "boom"),
        ("def main(:\n", "invalid syntax"),
    ],
)
async def test_python_errors_become_success_false(runner: SandboxRunner, code: str, message: str) -> None:
    wire = (await runner.run_python(code, {"a": 1})).to_wire()
    assert wire["success"] is False
    assert message in wire["message"]


async def test_python_helpers(runner: SandboxRunner) -> None:
    code = (
        "def main():\n"
        "    h = create_hmac('sha256', 'k')\n"
        "    return {'t': count_token('abcdefgh1'), 'b': str_to_base64('hi', 'p:'), 'h': h,\n"
        "            'same': SystemHelper is system_helper, 'd': delay(1)}\n"
    )
    result = await runner.run_python(code)
    assert result.success, result.message
    out = result.code_return
    assert out["t"] == 3 and out["b"] == "p:aGk=" and out["same"] is True and out["d"] is None
    stamp = out["h"]["timestamp"]
    digest = hmac.new(b"k", f"{stamp}\nk".encode(), hashlib.sha256).digest()
    assert out["h"]["sign"] == urllib.parse.quote(base64.b64encode(digest).decode())


async def test_python_delay_over_ten_seconds_is_refused(runner: SandboxRunner) -> None:
    result = await runner.run_python("def main():\n    delay(10001)")
    assert result.to_wire() == {"success": False, "message": "Delay must be <= 10000ms"}


async def test_javascript_contract_and_helpers(runner: SandboxRunner) -> None:
    code = (
        "async function main({a, b}) {\n"
        "  console.log('sum is', a + b, {k: 1});\n"
        "  await delay(1);\n"
        "  const h = typeof createHmac('sha256', 'k').sign;\n"
        "  return {sum: a + b, t: countToken('abcdefgh1'), b: strToBase64('hi'), h};\n"
        "}"
    )
    result = await runner.run_javascript(code, {"a": 1, "b": 2})
    assert result.to_wire() == {
        "success": True,
        "data": {"codeReturn": {"sum": 3, "t": 3, "b": "aGk=", "h": "string"}, "log": 'sum is 3 {"k":1}'},
    }


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("const x = 1", "No 'main' function defined"),
        ("function main() { throw new Error('boom') }", "boom"),
        ("function main() { return eval('1+1') }", "Code generation from strings disallowed"),
        ("function main() { return require('fs') }", "require is not defined"),
    ],
)
async def test_javascript_errors_become_success_false(runner: SandboxRunner, code: str, message: str) -> None:
    wire = (await runner.run_javascript(code)).to_wire()
    assert wire["success"] is False and message in wire["message"]


class _Echo(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        payload = json.dumps({"path": self.path, "got": json.loads(body or b"null")}).encode()
        self.send_response(201)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def echo_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


class _RecordingClient(httpx.AsyncClient):
    """A real httpx client that remembers the URLs it was asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    async def request(self, method: str, url: Any, **kwargs: Any) -> httpx.Response:  # type: ignore[override]
        self.seen.append(str(url))
        return await super().request(method, url, **kwargs)


async def test_http_request_goes_through_the_injected_parent_callable(echo_server: str) -> None:
    client = _RecordingClient()
    runner = SandboxRunner(FAST, http_request=_client_request_handler(client))
    code = (
        "def main(variables):\n"
        "    r = http_request(variables['url'] + '/py', method='POST', body={'n': 1})\n"
        "    return {'status': r['status'], 'data': json.loads(r['data'])}\n"
    )
    result = await runner.run_python(code, {"url": echo_server})
    assert result.success, result.message
    assert result.code_return == {"status": 201, "data": {"path": "/py", "got": {"n": 1}}}
    js = (
        "async function main({url}) {\n"
        "  const r = await httpRequest(url + '/js', {method: 'POST', body: {n: 2}});\n"
        "  return {status: r.status, data: JSON.parse(r.data)};\n"
        "}"
    )
    result = await runner.run_javascript(js, {"url": echo_server})
    assert result.code_return == {"status": 201, "data": {"path": "/js", "got": {"n": 2}}}
    assert client.seen == [echo_server + "/py", echo_server + "/js"]
    await client.aclose()


async def test_http_request_sends_text_bodies_and_refuses_large_responses(echo_server: str) -> None:
    async with httpx.AsyncClient() as client:
        handler = _client_request_handler(client, max_response_bytes=10)
        with pytest.raises(RuntimeError, match="Response too large"):
            await handler({"url": echo_server + "/t", "method": "post", "body": '"text"', "headers": {}})
        handler = _client_request_handler(client)
        response = await handler({"url": echo_server + "/t", "method": "POST", "body": "[1]", "timeout": 99})
        assert response["status"] == 201 and json.loads(response["data"])["got"] == [1]
        with pytest.raises(ValueError, match="needs a URL"):
            await handler({"url": ""})


async def test_http_request_errors_and_request_limit_reach_the_code() -> None:
    async def refuse(request: dict[str, Any]) -> dict[str, Any]:
        raise PermissionError(f"blocked {request['url']}: private address")

    runner = SandboxRunner(FAST, http_request=refuse)
    code = (
        "def main():\n"
        "    errors = []\n"
        "    for _ in range(4):\n"
        "        try:\n"
        "            http_request('http://10.0.0.1/')\n"
        "        except Exception as e:\n"
        "            errors.append(str(e))\n"
        "    return errors\n"
    )
    result = await runner.run_python(code)
    assert result.code_return == ["blocked http://10.0.0.1/: private address"] * 3 + [
        "Request limit exceeded: max 3"
    ]


async def test_http_request_without_a_handler_says_so(runner: SandboxRunner) -> None:
    code = (
        "def main():\n    try:\n        http_request('http://x/')\n"
        "    except Exception as e:\n        return str(e)"
    )
    result = await runner.run_python(code)
    assert result.code_return == "http_request is not available: no outbound HTTP handler is configured"


async def test_cold_start_is_measured(runner: SandboxRunner) -> None:
    result = await runner.run_python("def main():\n    return 1")
    assert result.startup_ms is not None and 0 < result.startup_ms <= result.wall_ms
    assert result.isolation == "namespaces+uid"
