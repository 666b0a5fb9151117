"""What the knowledge routes share: the knowledge-base services of the request's platform
(:func:`knowledge_bases`), and their refusals as FastGPT's answers, in one place: the knowledge routers
are built with :class:`DatasetRoute`, which answers a :class:`~fathom.datasets.errors.DatasetRequestError`
(and an unknown rerank model) with its FastGPT status code, ``statusText`` and message."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute

from fathom.datasets import KnowledgeBases, UnknownRerankModel
from fathom.datasets.errors import (
    CollectionMissing,
    DatasetRequestError,
    EmbeddingModelNotConfigured,
    InvalidDatasetRequest,
    RecordMissing,
    TagExists,
    TagMissing,
)
from fathom.server.errors import ApiError, not_found
from fathom.server.routes.common import platform_of

#: refusal → (HTTP status, FastGPT statusText)
_ANSWERS: dict[type[Exception], tuple[int, str]] = {
    InvalidDatasetRequest: (400, "invalidParams"),
    UnknownRerankModel: (400, "invalidParams"),
    EmbeddingModelNotConfigured: (400, ""),
    TagExists: (409, ""),
    TagMissing: (404, ""),
    CollectionMissing: (404, "unExistCollection"),
}


def knowledge_bases(request: Request) -> KnowledgeBases:
    """The knowledge-base application services the routes call."""
    return platform_of(request).knowledge_bases


def _dataset_api_error(exc: DatasetRequestError | UnknownRerankModel) -> ApiError:
    """The FastGPT answer of a knowledge-base refusal."""
    if isinstance(exc, RecordMissing):
        return not_found(exc.kind, str(exc))
    status, status_text = _ANSWERS.get(type(exc), (400, "invalidParams"))
    return ApiError(status, status_text, str(exc))


class DatasetRoute(APIRoute):
    """A route whose knowledge-base refusals are answered by :func:`_dataset_api_error`."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def answer(request: Request) -> Response:
            try:
                return await handler(request)
            except (DatasetRequestError, UnknownRerankModel) as exc:
                raise _dataset_api_error(exc) from None

        return answer
