"""The OpenAPI document's examples are recorded by running each route (tests/server/record_api_examples.py):
every documented path has one, each recorded request passes the route's request model, each recorded
answer matches the route's documented response schema, and ``docs/api-examples.md`` and ``docs/api.md``
agree with the document (the first is rendered from the same recording; every path the second names
exists)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from test_typed_routes_api import _routes, hidden_paths

from fathom.server.api_examples import load_examples, render_markdown
from fathom.server.typed import _request_model, validate

DOCS = Path(__file__).resolve().parents[2] / "docs"
EXAMPLES = load_examples()
RECORD = "make api-examples"


@pytest.fixture(scope="module")
def document(module_live_server: Any) -> dict[str, Any]:
    with module_live_server.client(module_live_server.admin_key) as client:
        answer: dict[str, Any] = client.get("/openapi.json").json()
    return answer


def test_every_documented_path_has_a_recorded_example(document: dict[str, Any]) -> None:
    paths = set(document["paths"])
    assert not paths - set(EXAMPLES), f"no recorded example (run `{RECORD}`): {sorted(paths - set(EXAMPLES))}"
    assert not set(EXAMPLES) - paths, f"examples of routes that are gone: {sorted(set(EXAMPLES) - paths)}"


def test_the_document_shows_the_recorded_examples(document: dict[str, Any]) -> None:
    create = document["paths"]["/api/support/openapi/create"]["post"]
    recorded = EXAMPLES["/api/support/openapi/create"]
    assert create["requestBody"]["content"]["application/json"]["example"] == recorded["request"]
    assert create["responses"]["200"]["content"]["application/json"]["example"] == recorded["response"]


@pytest.mark.parametrize("path", sorted(EXAMPLES))
def test_a_recorded_request_passes_its_routes_model(path: str) -> None:
    routes = [route for route in _routes() if route.path == path]
    assert routes, f"{path}: no such route"
    model = _request_model(routes[0])
    if model is None:
        pytest.skip(f"{path} is not typed yet")
    request = {k: v for k, v in EXAMPLES[path]["request"].items() if v != "<the root password>"}
    validate(model, request)


@pytest.mark.parametrize("path", sorted(EXAMPLES))
def test_a_recorded_answer_matches_its_documented_schema(document: dict[str, Any], path: str) -> None:
    example = EXAMPLES[path]
    if isinstance(example["response"], str):
        pytest.skip(f"{path} answers an event stream")
    operation = document["paths"][path][example["method"].lower()]
    declared = operation["responses"].get("200", {}).get("content", {}).get("application/json", {})
    if "$ref" not in declared.get("schema", {}):
        pytest.skip(f"{path}: no response model declared yet")
    answer = operation["responses"].get(str(example["status"]))
    assert answer is not None, f"{path}: HTTP {example['status']} is not documented"
    schema = answer["content"]["application/json"]["schema"]
    root = {"components": document["components"], "allOf": [schema]}
    errors = sorted(Draft202012Validator(root).iter_errors(example["response"]), key=str)
    assert not errors, f"{path}: " + "; ".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:5])


def test_the_examples_page_is_rendered_from_the_recording() -> None:
    page = (DOCS / "api-examples.md").read_bytes().decode()  # as written: a CSV example keeps its \r\n
    assert page == render_markdown(EXAMPLES), f"docs/api-examples.md is stale: run `{RECORD}`"


def test_every_path_docs_api_names_is_in_the_document(document: dict[str, Any]) -> None:
    named = set(re.findall(r"(/api/[A-Za-z0-9/_.]+[A-Za-z0-9])", (DOCS / "api.md").read_text()))
    known = set(document["paths"]) | hidden_paths()
    unknown = sorted(p for p in named if p not in known and not any(k.startswith(p + "/") for k in known))
    assert not unknown, f"docs/api.md names paths the API does not have: {unknown}"
