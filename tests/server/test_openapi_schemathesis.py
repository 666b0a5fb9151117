"""Schemathesis against the OpenAPI document of a live server, authenticated with the admin key.

From the typed document (request models as bodies and query parameters, ``data`` models as answers):
GET and POST of every documented path (the routes that also answer PUT/PATCH/DELETE run the same
handler), derandomized and bounded, positive (schema-conforming) and negative (schema-violating) data.

- No generated request may get a 5xx answer.
- Positive cases carry real ids (a seeded knowledge base, collection, row, app, published version,
  chat, MCP tool set, HTTP tool set and the ``simpleChat`` template replace the generated ids, except
  on routes that delete), so they are expected to reach the handler: at least 80% of the positive
  cases of all typed operations must not be refused by validation (a 400 ``invalidParams`` /
  ``missingParams`` naming a field of the request model; a handler's own refusal or a 404 for a
  record that is gone counts as reached).
- Every answer to a positive case of a typed operation matches its declared response schema.

The numbers are printed (5xx, reach) whatever the capture mode.

A second check posts hypothesis-built JSON bodies from the parameter names the routes read, with
values of every JSON type (FastGPT's clients send loosely typed bodies).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
import requests
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable

schemathesis = pytest.importorskip(
    "schemathesis", reason="schemathesis is not installed (pip install -e .[dev])"
)
from schemathesis.specs.openapi.checks import response_schema_conformance  # noqa: E402

POSITIVE_EXAMPLES = 5
NEGATIVE_EXAMPLES = 2
REACH_MIN = 0.8
VALIDATION_REFUSALS = ("invalidParams", "missingParams")
DESTRUCTIVE = ("delete", "/del", "clear", "/stop")
URL_MAX = 8000  # query strings beyond the HTTP server's request-line limit are dropped by it, not us


def _typed(operation: Any) -> bool:
    """Whether the operation's input is a request model of the document (a body or query parameters)."""
    definition = operation.definition.raw
    body = definition.get("requestBody", {}).get("content", {}).get("application/json", {})
    return "$ref" in body.get("schema", {}) or bool(definition.get("parameters"))


def _fields(operation: Any, components: dict[str, Any]) -> set[str]:
    """The names the operation's request model declares."""
    definition = operation.definition.raw
    names = {p["name"] for p in definition.get("parameters", [])}
    body = definition.get("requestBody", {}).get("content", {}).get("application/json", {})
    reference = body.get("schema", {}).get("$ref", "")
    if reference:
        names |= set(components.get(reference.rsplit("/", 1)[-1], {}).get("properties", {}))
    return names | {"body", "query"}


def _refused_by_validation(response: Any, fields: set[str]) -> bool:
    """A 400 ``invalidParams`` / ``missingParams`` naming a field of the request model first (a handler's
    own refusal, such as "collection … is ready; only failed ones retry", reached the handler)."""
    if response.status_code != 400:
        return False
    try:
        body = response.json()
    except ValueError:
        return False
    named = str(body.get("message", "")).split(":", 1)[0].split(".", 1)[0].split("[", 1)[0]
    return body.get("statusText") in VALIDATION_REFUSALS and named in fields


def _ids_for(path: str, world: dict[str, str]) -> dict[str, str]:
    """The seeded ids by the field names ``path`` reads them under (none on routes that delete)."""
    if any(word in path for word in DESTRUCTIVE):
        return {}
    ids = {
        "datasetId": world["dataset"],
        "collectionId": world["collection"],
        "dataId": world["data"],
        "appId": world["app"],
        "chatId": world["chat"],
        "versionId": world["version"],
        "templateId": "simpleChat",
    }
    if "/core/app/mcpTools/" in path or "/core/app/httpTools/" in path:
        kind = "mcp" if "/mcpTools/" in path else "http"
        ids["appId"] = ids["id"] = world[kind]
    elif "/core/app/" in path:
        ids["id"] = world["app"]
    elif "/core/dataset/collection/" in path or "/core/dataset/training/" in path:
        ids["id"] = world["collection"]
    elif "/core/dataset/data/" in path:
        ids["id"] = world["data"]
    elif "/core/dataset/" in path:
        ids["id"] = world["dataset"]
    return ids


def _with_real_ids(case: Any, ids: dict[str, str]) -> None:
    for container in (case.query, case.body):
        if isinstance(container, dict):
            for field in container.keys() & ids.keys():
                if isinstance(container[field], str):
                    container[field] = ids[field]


@dataclass
class Run:
    """What the fuzzing saw."""

    base_url: str
    headers: dict[str, str]
    world: dict[str, str]
    components: dict[str, Any]
    server_errors: list[str] = field(default_factory=list)
    mismatches: list[str] = field(default_factory=list)
    refused: dict[str, int] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)
    positive: int = 0
    reached: int = 0
    oversize: int = 0


def _fuzz(run: Run, operation: Any, mode: Any, examples: int) -> None:
    """``examples`` cases of ``operation`` in ``mode``, tallied in ``run``."""
    positive = mode is schemathesis.GenerationMode.POSITIVE
    typed, ids = _typed(operation), _ids_for(operation.path, run.world)
    fields = _fields(operation, run.components)

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.explicit, Phase.generate],
        database=None,
        derandomize=True,  # the same examples every run: CI stays deterministic
    )
    def check(case: Any) -> None:
        if positive:
            _with_real_ids(case, ids)
        shown = f"{case.method} {case.formatted_path} query={case.query!r:.300} body={case.body!r:.300}"
        try:
            response = case.call(base_url=run.base_url, headers=run.headers, timeout=120)
        except requests.RequestException as exc:
            if len(repr(case.query)) > URL_MAX:  # the HTTP server refuses a request line this long
                run.oversize += 1
                return
            run.server_errors.append(f"{shown} -> connection failed: {exc}")
            return
        if response.status_code >= 500:
            run.server_errors.append(f"{shown} -> {response.status_code} {response.text[:300]}")
        if not positive or not typed:
            return
        run.positive += 1
        if _refused_by_validation(response, fields):
            run.refused[operation.path] = run.refused.get(operation.path, 0) + 1
            run.reasons.setdefault(operation.path, response.json()["message"][:120])
        else:
            run.reached += 1
        try:
            case.validate_response(response, checks=[response_schema_conformance])
        except Exception as exc:  # schemathesis's failure group: the answer and its schema differ
            run.mismatches.append(f"{shown} -> {response.status_code} {response.text[:300]}\n{exc}")

    try:
        check()
    except Unsatisfiable:  # nothing to violate (an operation without parameters or body)
        assert not positive


def test_generated_requests_get_no_5xx_reach_the_handlers_and_match_the_answer_schemas(
    module_live_server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    base_url = module_live_server.base_url
    headers = {"Authorization": f"Bearer {module_live_server.admin_key}"}
    with httpx.Client(base_url=base_url, headers=headers, timeout=120) as client:  # a busy machine
        world = dict(zip(("dataset", "collection", "app", "chat"), _seed(client)[:4], strict=True))
        rows = client.post(
            "/api/core/dataset/collection/create", json={"datasetId": world["dataset"], "name": "rows"}
        ).json()["data"]
        world["data"] = client.post(
            "/api/core/dataset/data/insertData",
            json={"collectionId": rows, "q": "Seeded row", "a": "for the fuzzer"},
        ).json()["data"]
        world["version"] = client.post("/api/core/app/version/list", json={"appId": world["app"]}).json()[
            "data"
        ]["list"][0]["_id"]
        mcp = {"name": "fuzz MCP", "url": "http://127.0.0.1:9/mcp", "toolList": [{"name": "lookup"}]}
        world["mcp"] = client.post("/api/core/app/mcpTools/create", json=mcp).json()["data"]
        world["http"] = client.post("/api/core/app/httpTools/create", json={"name": "fuzz API"}).json()[
            "data"
        ]
    schema = schemathesis.openapi.from_url(f"{base_url}/openapi.json").include(method=["GET", "POST"])
    schema.config.generation.update(allow_x00=False)  # NUL is refused by the body reader, by design
    components = schema.raw_schema.get("components", {}).get("schemas", {})
    run = Run(base_url, headers, world, components)
    operations = [result.ok() for result in schema.get_all_operations()]
    for operation in operations:
        _fuzz(run, operation, schemathesis.GenerationMode.POSITIVE, POSITIVE_EXAMPLES)
        _fuzz(run, operation, schemathesis.GenerationMode.NEGATIVE, NEGATIVE_EXAMPLES)
    reach = run.reached / run.positive if run.positive else 0.0
    with capsys.disabled():
        print(
            f"\nschemathesis: {len(operations)} operations ({sum(map(_typed, operations))} typed), "
            f"{len(run.server_errors)} x 5xx ({run.oversize} over-long URLs dropped by the HTTP server); "
            f"positive cases of typed operations: {run.reached}/"
            f"{run.positive} reached the handler ({reach:.0%}); "
            f"{len(run.mismatches)} answers off their schema; refused by validation: "
            f"{sorted(run.refused.items(), key=lambda kv: -kv[1])}"
        )
        for path, reason in sorted(run.reasons.items()):
            print(f"  {path}: e.g. {reason}")
    assert len(operations) > 50
    assert not run.server_errors, "\n".join(run.server_errors[:30])
    assert not run.mismatches, "\n\n".join(run.mismatches[:10])
    assert reach >= REACH_MIN, run.reasons


# Most routes read FastGPT's loosely typed parameters from the query and/or the JSON body, so their
# OpenAPI operations declare no body and schemathesis sends none. This second check posts JSON bodies
# built from the parameter names the routes read, with values of every JSON type and real ids.
PARAM_NAMES = [
    "appId",
    "chatId",
    "id",
    "name",
    "collectionId",
    "type",
    "intro",
    "datasetId",
    "dataId",
    "metadata",
    "a",
    "vectorModel",
    "variables",
    "text",
    "searchText",
    "searchKey",
    "q",
    "indexes",
    "detail",
    "versionName",
    "versionId",
    "version",
    "usingReRank",
    "userGoodFeedback",
    "userBadFeedback",
    "trainingType",
    "top",
    "title",
    "stream",
    "source",
    "similarity",
    "searchMode",
    "responseChatItemId",
    "rerankWeight",
    "nodes",
    "edges",
    "messages",
    "link",
    "limit",
    "lastEventId",
    "embeddingWeight",
    "days",
    "data",
    "customUid",
    "customTitle",
    "contentId",
    "agentModel",
    "offset",
    "pageSize",
    "pageNum",
    "simpleConfig",
    "chunkSize",
    "chunkSettingMode",
]


def _seed(client: Any) -> list[str]:
    """A knowledge base with one collection, a published start → answer app and one chat: real ids."""
    dataset = client.post("/api/core/dataset/create", json={"name": "fuzz"}).json()["data"]
    collection = client.post(
        "/api/core/dataset/collection/create/text",
        json={"datasetId": dataset, "name": "c", "text": "Fuzzing keeps the server honest."},
    ).json()["data"]["collectionId"]
    node_input = {"key": "text", "value": "ok", "valueType": "string", "renderTypeList": ["input"]}
    app = client.post(
        "/api/core/app/create",
        json={
            "name": "fuzz",
            "type": "advanced",
            "nodes": [
                {"nodeId": "s", "name": "s", "flowNodeType": "workflowStart", "inputs": [], "outputs": []},
                {
                    "nodeId": "a",
                    "name": "a",
                    "flowNodeType": "answerNode",
                    "inputs": [node_input],
                    "outputs": [],
                },
            ],
            "edges": [
                {
                    "source": "s",
                    "target": "a",
                    "sourceHandle": "s-source-right",
                    "targetHandle": "a-target-left",
                }
            ],
        },
    ).json()["data"]
    client.post("/api/core/app/version/publish", json={"appId": app}).raise_for_status()
    client.post(
        "/api/v1/chat/completions",
        json={"appId": app, "chatId": "fuzz", "messages": [{"role": "user", "content": "x"}]},
    ).raise_for_status()
    return [dataset, collection, app, "fuzz", "0" * 24, ""]


def test_no_json_body_built_from_the_route_parameters_gets_a_server_error(module_live_server: Any) -> None:
    from hypothesis import strategies as st

    headers = {"Authorization": f"Bearer {module_live_server.admin_key}"}
    with module_live_server.client(module_live_server.admin_key) as client:
        ids = _seed(client)
        paths = [p for p, ops in client.get("/openapi.json").json()["paths"].items() if "post" in ops]
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**63), max_value=2**63),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=12),
        st.sampled_from(ids),
    )
    values = st.recursive(
        scalars,
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(PARAM_NAMES), inner, max_size=3)
        ),
        max_leaves=6,
    )
    messages = st.lists(
        st.fixed_dictionaries(
            {"role": st.sampled_from(["user", "assistant", "system", "x"]), "content": values}
        ),
        max_size=3,
    )
    bodies = st.dictionaries(st.sampled_from(PARAM_NAMES), values, max_size=6) | st.builds(
        lambda body, m: {**body, "messages": m},
        st.dictionaries(st.sampled_from(PARAM_NAMES), values, max_size=4),
        messages,
    )
    failures: list[str] = []
    statuses: dict[int, int] = {}

    def fuzz(http: httpx.Client, path: str) -> None:
        @given(body=bodies)
        @settings(
            max_examples=10,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            phases=[Phase.generate],
            database=None,
            derandomize=True,  # the same examples every run: CI stays deterministic
        )
        def check(body: dict[str, Any]) -> None:
            response = http.post(path, json=body)
            statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
            if response.status_code >= 500:
                failures.append(
                    f"POST {path} {json.dumps(body)[:300]} -> {response.status_code} {response.text[:300]}"
                )

        check()

    with httpx.Client(base_url=module_live_server.base_url, headers=headers, timeout=20) as http:
        for path in paths:
            fuzz(http, path)
    print(f"{len(paths)} paths, statuses {sorted(statuses.items())}")
    assert sum(statuses.values()) >= 5 * len(paths)
    assert not failures, "\n".join(failures[:30])
