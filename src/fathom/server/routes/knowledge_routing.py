"""What the knowledge routes share: the knowledge-base services of the request's platform. Their
refusals (:class:`~fathom.datasets.errors.DatasetRequestError`) are answered in one place, the handler
``server/errors.py`` registers."""

from __future__ import annotations

from fastapi import Request

from fathom.datasets import KnowledgeBases
from fathom.server.routes.common import platform_of


def knowledge_bases(request: Request) -> KnowledgeBases:
    """The knowledge-base application services the routes call."""
    return platform_of(request).knowledge_bases
