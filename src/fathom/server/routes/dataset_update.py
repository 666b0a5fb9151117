"""``/api/core/dataset/update``: rename a knowledge base or folder, move it (``parentId``), or change its
embedding model (a re-embed job)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from fastapi import APIRouter, Depends, Request
from pydantic import Field

from fathom.server.auth import AuthContext
from fathom.server.errors import ApiError, envelope
from fathom.server.routes.common import ANY_METHOD, platform_of
from fathom.server.routes.dataset_models import DatasetName, ModelChoice, model_id_of
from fathom.server.routes.dataset_sources import SourceFields, update_source
from fathom.server.routes.datasets import checked_vlm_model, kb_caller, load_dataset, load_folder
from fathom.server.typed import BLANK_IS_NONE, ObjectId, OptionalObjectId, Text, answers, parsed

router = APIRouter(tags=["datasets"])


class UpdateDataset(SourceFields):
    """Only the fields sent change; null leaves a field as it is."""

    id_kinds: ClassVar[dict[str, str]] = {"id": "dataset"}
    id: ObjectId = Field(description="The knowledge base's id")
    name: DatasetName | None = None
    intro: Annotated[Text | None, Field(description="The new description")] = None
    vectorModel: ModelChoice = Field(None, description="A new embedding model: every row is embedded again")
    parentId: OptionalObjectId = Field(None, description='Move into this folder (null or "": the root)')
    vlmModel: Annotated[str | None, BLANK_IS_NONE] = Field(
        None, max_length=200, description="The vision model (vision: true) describing images"
    )


@router.api_route(
    "/api/core/dataset/update",
    methods=ANY_METHOD,
    summary="Update a knowledge base",
    responses=answers(None),
)
async def update_dataset(
    request: Request, auth: AuthContext = Depends(kb_caller), payload: UpdateDataset = parsed(UpdateDataset)
) -> dict[str, Any]:
    """A new ``vectorModel`` queues a ``dataset.reembed`` job: the dataset keeps searching with its old
    model until every index text is embedded again."""
    dataset, _ = await load_dataset(request, auth, payload.id, "manage")
    platform = platform_of(request)
    if "parentId" in payload.model_fields_set:  # a move: write permission on the folder it goes in
        if payload.parentId:
            await load_folder(request, auth, payload.parentId, "write")
        try:
            await platform.datasets.move_dataset(auth.team_id, dataset.id, payload.parentId)
        except ValueError as exc:
            raise ApiError(400, "invalidParams", str(exc)) from None
    changes: dict[str, Any] = {}
    if payload.name is not None:
        changes["name"] = payload.name
    if payload.intro is not None:
        changes["intro"] = payload.intro
    if payload.vlmModel is not None:
        changes["vlm_model"] = checked_vlm_model(request, payload.vlmModel)
    vector_model = model_id_of(payload.vectorModel)
    if vector_model and dataset.type == "folder":
        raise ApiError(
            400, "invalidParams", "vectorModel: a folder has no embedding model; change its knowledge bases'"
        )
    if vector_model:
        try:
            platform.embedders.get(vector_model)
        except LookupError:
            raise ApiError(400, "", f"System not embedding model: {vector_model}") from None
        changes.update(auto_model_pending=False, auto_model_reason=None)  # chosen by name, not by auto
    await update_source(request, dataset, payload)  # refused before anything else changes
    if changes:
        await platform.datasets.update_dataset(auth.team_id, dataset.id, **changes)
    if vector_model:
        await platform.reembed.change_model(auth.team_id, dataset.id, vector_model)
    return envelope(None)
