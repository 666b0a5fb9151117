"""Schemathesis against the OpenAPI document of a live server: no generated request, authenticated
with the admin key, may get a 5xx answer.

Bounded: GET and POST of every documented path (the routes that also answer PUT/PATCH/DELETE run the
same handler), a few examples each, positive and negative (schema-violating) data.
"""

from __future__ import annotations

from typing import Any

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
