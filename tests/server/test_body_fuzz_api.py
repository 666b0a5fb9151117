"""Hostile bodies against every route of the OpenAPI document, on SQLite and PostgreSQL (issue 28 item 5):
none is answered with a 5xx.

The routes come from the live server's ``/openapi.json`` (each documented path and method). The bodies
are hypothesis-built from the route's own field names (its request model's properties and query
parameters):

- what the body reader refuses before any handler runs, each a 400 ``invalidParams`` naming the problem:
  invalid UTF-8, nesting deeper than the limit, an integer of more than 4,300 digits (Python's int
  conversion limit), NaN / Infinity / a float beyond 64 bits, a NUL character or a lone surrogate in a
  value or a key;
- what JSON allows but the route does not expect: each field with a value of every other JSON type,
  including integers that fit no database column.

Examples are derandomized and bounded (one server per backend for the module), so the run is the same
every time and stays short.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from live_support import LiveServer, free_port, start_live_server

from fathom.config import Settings
from fathom.server.json_body import MAX_DEPTH, MAX_INT_DIGITS

EXAMPLES_PER_ROUTE = 8
#: answered without reading a body (documents, pages, health): they still get the bodies, and no 5xx
NO_BODY = ("/openapi.json", "/docs", "/health", "/api/files/preview")


def _settings(root: Path, request: pytest.FixtureRequest, backend: str) -> Settings:
    url = None
    if backend == "postgres":
        server = request.getfixturevalue("postgres_server")
        url = server.create_database(f"bodyfuzz_{os.getpid()}_{free_port()}")
    extra: dict[str, Any] = {"database_url": url} if url else {}
    return Settings(data_dir=root / "data", port=free_port(), workers=0, seed_demo=False, **extra)


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from start_live_server(_settings(tmp_path_factory.mktemp(request.param), request, request.param))


def _routes(document: dict[str, Any]) -> list[tuple[str, str, list[str], bool]]:
    """(method, path, field names, whether it reads a JSON body) of each documented operation."""
    components = document.get("components", {}).get("schemas", {})
    routes: list[tuple[str, str, list[str], bool]] = []
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            names = {p["name"] for p in operation.get("parameters", [])}
            content = operation.get("requestBody", {}).get("content", {})
            body = content.get("application/json", {})
            # an upload reads a form (its JSON rides in a form field): a JSON body is refused as such
            reads_json = "multipart/form-data" not in content and not path.startswith(NO_BODY)
            reference = body.get("schema", {}).get("$ref", "")
            if reference:
                names |= set(components.get(reference.rsplit("/", 1)[-1], {}).get("properties", {}))
            routes.append((method.upper(), path, sorted(names) or ["name"], reads_json))
    return routes


def _object(field: str, value: str) -> bytes:
    """``{"field": <value>}`` with ``value`` written as raw JSON text."""
    return b"{" + json.dumps(field).encode() + b":" + value.encode() + b"}"


# The bodies' builders are named functions, not lambdas: hypothesis describes a lambda by reading and
# parsing its source, once per route (~6 s of CPU a run over ~480 routes).
def _huge_int(f: str, n: int, negative: bool) -> tuple[bytes, str]:
    return _object(f, ("-" if negative else "") + "9" * n), "digits"


def _not_a_number(f: str, text: str) -> tuple[bytes, str]:
    return _object(f, text), "number"


def _bad_utf8(f: str, prefix: str, byte: int) -> tuple[bytes, str]:
    return b"{" + json.dumps(f).encode() + b':"' + prefix.encode() + bytes([byte]) + b'"}', "UTF-8"


def _deep(f: str, depth: int, brackets: bool) -> tuple[bytes, str]:
    value = ("[" * depth + "]" * depth) if brackets else ('{"a":' * depth + "1" + "}" * depth)
    return _object(f, value), "nested deeper"


def _unstorable(f: str, escape: str, in_key: bool) -> tuple[bytes, str]:
    body = _object(f, '{"' + escape + '":1}') if in_key else _object(f, '"x' + escape + 'y"')
    return body, "NUL" if escape == "\\u0000" else "surrogate"


#: bodies the reader refuses, and a word of the message that names the problem
def _refused(fields: list[str]) -> st.SearchStrategy[tuple[bytes, str]]:
    field = st.sampled_from(fields)
    huge_int = st.builds(
        _huge_int, field, st.integers(MAX_INT_DIGITS + 1, MAX_INT_DIGITS + 2000), st.booleans()
    )
    not_a_number = st.builds(
        _not_a_number, field, st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999", "-2.5e400"])
    )
    bad_utf8 = st.builds(
        _bad_utf8,
        field,
        st.text(alphabet="abc é中", max_size=5),
        st.sampled_from([0x80, 0xBF, 0xC0, 0xC3, 0xED, 0xF5, 0xFF]),
    )
    deep = st.builds(_deep, field, st.integers(MAX_DEPTH, MAX_DEPTH * 40), st.booleans())
    unstorable = st.builds(
        _unstorable,
        field,
        st.sampled_from(["\\u0000", "\\ud800", "\\udbff", "\\udc00", "\\udfff"]),
        st.booleans(),
    )
    return st.one_of(huge_int, not_a_number, bad_utf8, deep, unstorable)


#: JSON values of every type, for a field that expects one of them
JSON_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, -1, 2**31, 2**63, -(2**63) - 1, 10**100]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)


def _json_bytes(body: dict[str, Any]) -> bytes:
    return json.dumps(body).encode()


def _wrong_types(fields: list[str]) -> st.SearchStrategy[bytes]:
    return st.dictionaries(st.sampled_from(fields), JSON_VALUES, min_size=1).map(_json_bytes)


def _as_refused(pair: tuple[bytes, str]) -> tuple[str, bytes, str]:
    return ("refused", *pair)


def _as_typed(raw: bytes) -> tuple[str, bytes, str]:
    return ("typed", raw, "")


def _fuzz_route(
    client: httpx.Client,
    route: tuple[str, str, list[str], bool],
    failures: list[str],
    unnamed: list[str],
) -> None:
    method, path, fields, reads_json = route

    @given(case=st.one_of(_refused(fields).map(_as_refused), _wrong_types(fields).map(_as_typed)))
    @settings(
        max_examples=EXAMPLES_PER_ROUTE,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.generate],
        database=None,
        derandomize=True,
    )
    def send(case: tuple[str, bytes, str]) -> None:
        kind, raw, named = case
        response = client.request(method, path, content=raw)
        shown = f"{method} {path} {raw[:120]!r} -> {response.status_code} {response.text[:200]}"
        if response.status_code >= 500:
            failures.append(shown)
        elif kind == "refused" and reads_json and response.status_code == 400:
            body = response.json()
            if body.get("statusText") != "invalidParams" or named not in body.get("message", ""):
                unnamed.append(shown)

    send()


def test_no_hostile_body_gets_a_5xx_on_any_route(server: LiveServer) -> None:
    headers = {"Authorization": f"Bearer {server.admin_key}", "Content-Type": "application/json"}
    failures: list[str] = []
    unnamed: list[str] = []
    with httpx.Client(base_url=server.base_url, headers=headers, timeout=120) as client:
        routes = _routes(client.get("/openapi.json").json())
        assert len(routes) > 50, routes  # the whole API, not a stub
        for route in routes:
            _fuzz_route(client, route, failures, unnamed)
    assert not failures, f"{len(failures)} × 5xx:\n" + "\n".join(failures[:20])
    assert not unnamed, "refusals that do not name the problem:\n" + "\n".join(unnamed[:20])


@pytest.mark.parametrize(
    "query",
    [
        "key=a&expires=99999999999&sign=%C3%A9%C3%A9",  # non-ASCII: compare_digest refused str
        "key=a&expires=99999999999&sign=%ED%A0%80",  # a lone surrogate's bytes
        "key=a&expires=99999999999&sign=%00",
        "key=a&expires=1e9999&sign=x",
    ],
)
def test_a_preview_link_with_a_strange_signature_is_refused_not_a_500(server: LiveServer, query: str) -> None:
    with httpx.Client(base_url=server.base_url, timeout=60) as client:
        response = client.get(f"/api/files/preview?{query}")
    assert 400 <= response.status_code < 500, response.text


@pytest.mark.parametrize(
    ("data", "named"),
    [
        ('{"appId":' + "[" * 5000 + "]" * 5000 + "}", "data: nested deeper"),
        ('{"chatId":' + "1" * 5000 + "}", "data: an integer has more than"),
        ('{"chatId":"a\\u0000"}', "data.chatId: contains a NUL"),
        ("[1]", "data: must be a JSON object"),
    ],
    ids=["deep", "huge integer", "NUL", "not an object"],
)
def test_an_upload_s_json_form_field_is_read_by_the_same_rules(
    server: LiveServer, data: str, named: str
) -> None:
    with server.client(server.admin_key) as client:
        response = client.post(
            "/api/core/chat/file/upload",
            files={"file": ("a.txt", b"hello", "text/plain")},
            data={"data": data},
        )
    assert response.status_code == 400, response.text
    assert named in response.json()["message"], response.text
