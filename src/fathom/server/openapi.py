"""The OpenAPI document with one operation id per (path, method).

Most routes answer on several methods (FastGPT clients use GET and POST alike), and FastAPI names an
operation after its route only, so the same id would repeat for every method. Each id here is the
route's name and path followed by the method, which keeps them unique and stable.
"""

from __future__ import annotations

import warnings
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
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
