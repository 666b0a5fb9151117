"""Schemathesis against the OpenAPI document of a live server: no generated request, authenticated
with the admin key, may get a 5xx answer.

Bounded: GET and POST of every documented path (the routes that also answer PUT/PATCH/DELETE run the
same handler), a few examples each, positive and negative (schema-violating) data. A second check
posts hypothesis-built JSON bodies from the parameter names the routes read (the OpenAPI document does
not describe FastGPT's loosely typed bodies, so schemathesis alone would send none).
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable

schemathesis = pytest.importorskip(
    "schemathesis", reason="schemathesis is not installed (pip install -e .[dev])"
)

EXAMPLES = 4


def test_no_generated_request_gets_a_server_error(module_live_server: Any) -> None:
    base_url = module_live_server.base_url
    schema = schemathesis.openapi.from_url(f"{base_url}/openapi.json").include(method=["GET", "POST"])
    headers = {"Authorization": f"Bearer {module_live_server.admin_key}"}
    failures: list[str] = []
    operations = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        operations += 1
        for mode in (schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE):

            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(
                max_examples=EXAMPLES,
                deadline=None,
                suppress_health_check=list(HealthCheck),
                phases=[Phase.explicit, Phase.generate],
                database=None,
                derandomize=True,  # the same examples every run: CI stays deterministic
            )
            def check(case: Any) -> None:
                response = case.call(base_url=base_url, headers=headers, timeout=20)
                if response.status_code >= 500:
                    failures.append(
                        f"{case.method} {case.formatted_path} query={case.query} body={case.body!r:.300} "
                        f"-> {response.status_code} {response.text[:300]}"
                    )

            try:
                check()
            except Unsatisfiable:  # nothing to violate (an operation without parameters or body)
                assert mode is schemathesis.GenerationMode.NEGATIVE
    assert operations > 50
    assert not failures, "\n".join(failures)


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
