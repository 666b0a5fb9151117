"""The OpenAPI document with one operation id per (path, method).

Most routes answer on several methods (FastGPT clients use GET and POST alike), and FastAPI names an
operation after its route only, so the same id would repeat for every method. Each id here is the
route's name and path followed by the method, which keeps them unique and stable.

The error answers every typed route declares (400, 401, 403, 404: the same envelope and words on ~470
operations, a quarter of the document) are written once, under ``components/responses``, and each
operation refers to them; an operation whose error answer differs (a recorded example attached) keeps
its own.
"""

from __future__ import annotations

import json
import warnings
from collections import Counter
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute

from fathom.server.api_examples import attach_examples, load_examples
from fathom.server.typed import document_typed_routes


def route_id(route: APIRoute) -> str:
    """The method-less part of an operation id: the endpoint's name and its path."""
    path = "".join(ch if ch.isalnum() else "_" for ch in route.path_format).strip("_")
    return f"{route.name}_{path}"


def install_unique_operation_ids(app: FastAPI) -> None:
    """Make ``app.openapi()`` return operation ids ``<name>_<path>_<method>``, unique per operation."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message="Duplicate Operation ID")
                schema = get_openapi(
                    title=app.title,
                    version=app.version,
                    description=app.description,
                    routes=app.routes,
                )
            for operations in schema.get("paths", {}).values():
                for method, operation in operations.items():
                    if isinstance(operation, dict) and "operationId" in operation:
                        operation["operationId"] = f"{operation['operationId']}_{method}"
            document_typed_routes(app.routes, schema)
            attach_examples(schema, load_examples())
            _share_error_responses(schema)
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


#: the shared error answers' names under ``components/responses``, by status
_SHARED_ERRORS = {"400": "BadRequest", "401": "Unauthorized", "403": "Forbidden", "404": "NotFound"}


def _share_error_responses(document: dict[str, Any]) -> None:
    """Replace each operation's 400/401/403/404 answer by a reference to one shared copy, where it is
    the answer most operations give for that status (the typed routes' error envelope)."""
    answers = [
        responses
        for operations in document.get("paths", {}).values()
        for operation in operations.values()
        if isinstance(operation, dict) and isinstance(responses := operation.get("responses"), dict)
    ]
    components = document.setdefault("components", {}).setdefault("responses", {})
    for status, name in _SHARED_ERRORS.items():
        given = [responses[status] for responses in answers if status in responses]
        if not given:
            continue
        counts = Counter(json.dumps(answer, sort_keys=True) for answer in given)
        common = json.loads(counts.most_common(1)[0][0])
        components[name] = common
        for responses in answers:
            if responses.get(status) == common:
                responses[status] = {"$ref": f"#/components/responses/{name}"}
