"""``/api/core/dataset/update``: rename a knowledge base, or change its embedding model (a re-embed job)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request

from fathom.server.auth import AuthContext, authenticate
from fathom.server.errors import ApiError, envelope
from fathom.server.routes.common import ANY_METHOD, check_length, object_id, params, platform_of
from fathom.server.routes.datasets import NAME_MAX, load_dataset

router = APIRouter(tags=["datasets"])


@router.api_route("/api/core/dataset/update", methods=ANY_METHOD, summary="Update a knowledge base")
async def update_dataset(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    """Body ``{id, name?, intro?, vectorModel?}``. A new ``vectorModel`` queues a ``dataset.reembed`` job:
    the dataset keeps searching with its old model until every index text is embedded again."""
    values = await params(request)
    dataset, _ = await load_dataset(request, auth, object_id(values, "id", "dataset"), "manage")
    platform = platform_of(request)
    changes: dict[str, Any] = {}
    if values.get("name") is not None:
        name = str(values["name"]).strip()
        if not name:
            raise ApiError(400, "invalidParams", "name: must not be empty")
        check_length(values, "name", NAME_MAX)
        changes["name"] = name
    if values.get("intro") is not None:
        changes["intro"] = str(values["intro"])
    vector_model = values.get("vectorModel")
    if isinstance(vector_model, dict):  # FastGPT clients may send the model object they were shown
        vector_model = vector_model.get("model")
    if vector_model:
        try:
            platform.embedders.get(str(vector_model))
        except LookupError:
            raise ApiError(400, "", f"System not embedding model: {vector_model}") from None
    if changes:
        await platform.datasets.update_dataset(auth.team_id, dataset.id, **changes)
    if vector_model:
        await platform.reembed.change_model(auth.team_id, dataset.id, str(vector_model))
    return envelope(None)
