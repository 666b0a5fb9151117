"""Changing and deleting collections over FastGPT's paths: ``PUT collection/update`` (rename, tags,
forbid, move, createTime; by ``id`` or by ``datasetId`` + ``externalFileId``) and ``collection/delete``
(``{"collectionIds": [...]}`` as FastGPT documents it now, or the older ``?id=``)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from fastapi import APIRouter, Depends, Request
from pydantic import Field

from fathom.datasets.collection_service import CollectionChanges
from fathom.server.auth import AuthContext
from fathom.server.errors import ApiError, envelope
from fathom.server.routes.collection_fields import CollectionTags, CreateTime, ExternalFileId
from fathom.server.routes.collections import load_collection, load_owned_collection
from fathom.server.routes.common import ANY_METHOD
from fathom.server.routes.dataset_models import CollectionName, WireBool
from fathom.server.routes.datasets import kb_caller, load_dataset
from fathom.server.routes.knowledge_routing import knowledge_bases
from fathom.server.typed import BLANK_IS_NONE, ApiModel, ObjectId, OptionalObjectId, answers, parsed

router = APIRouter(tags=["collections"])

DELETE_MAX = 200  # collections one delete may name


class UpdateCollection(ApiModel):
    """FastGPT's ``{id, parentId?, name?, tags?, forbid?, createTime?}``; instead of ``id``, ``datasetId``
    + ``externalFileId`` name the collection. A field left out is unchanged; ``parentId`` null or ""
    moves the collection to the root; ``tags: []`` removes every tag."""

    id_kinds: ClassVar[dict[str, str]] = {"id": "collection"}
    id: OptionalObjectId = Field(None, description="The collection's id")
    datasetId: OptionalObjectId = Field(None, description="With externalFileId, instead of id")
    externalFileId: ExternalFileId = None
    parentId: OptionalObjectId = Field(None, description='A folder collection; null or "": the root')
    name: Annotated[CollectionName | None, BLANK_IS_NONE] = Field(None, examples=["Refund policy 2024"])
    tags: CollectionTags = None
    forbid: Annotated[WireBool | None, BLANK_IS_NONE] = Field(
        None, description="A forbidden collection is left out of every search"
    )
    createTime: CreateTime = None


class DeleteCollections(ApiModel):
    """``collectionIds`` (FastGPT's current form) or ``id`` (the older ``DELETE ?id=``)."""

    id_kinds: ClassVar[dict[str, str]] = {"id": "collection"}
    collectionIds: Annotated[list[ObjectId], Field(max_length=DELETE_MAX)] | None = Field(
        None, examples=[["6650a1b2c3d4e5f6a7b8c9d0"]]
    )
    id: OptionalObjectId = Field(None, description="One collection's id (the older form)")


async def _addressed(request: Request, auth: AuthContext, payload: UpdateCollection) -> str:
    """The id of the collection an update names: ``id``, or ``datasetId`` + ``externalFileId``."""
    if payload.datasetId and payload.externalFileId:
        dataset, _ = await load_dataset(request, auth, payload.datasetId, "write")
        return await knowledge_bases(request).collections.by_external_file(
            auth.team_id, dataset.id, payload.externalFileId
        )
    if payload.id is None:
        raise ApiError(400, "missingParams", "id: is required (or datasetId and externalFileId)")
    return payload.id


@router.api_route(
    "/api/core/dataset/collection/update",
    methods=ANY_METHOD,
    summary="Rename, tag, forbid or move a collection",
    responses=answers(None),
)
async def update_collection(
    request: Request,
    auth: AuthContext = Depends(kb_caller),
    payload: UpdateCollection = parsed(UpdateCollection),
) -> dict[str, Any]:
    """Needs write permission on the collection's knowledge base. ``fileNotFound`` when no collection
    has the ``externalFileId``; ``missingParams`` with neither ``id`` nor ``datasetId`` +
    ``externalFileId``."""
    collection_id = await _addressed(request, auth, payload)
    collection, _ = await load_owned_collection(request, auth, collection_id, "write")
    changes = CollectionChanges(
        name=payload.name,
        tags=payload.tags,
        forbid=payload.forbid,
        created_at=payload.createTime,
        move="parentId" in payload.model_fields_set,
        parent_id=payload.parentId,
    )
    await knowledge_bases(request).collections.update(auth.team_id, collection, changes)
    return envelope(None)


@router.api_route(
    "/api/core/dataset/collection/delete",
    methods=ANY_METHOD,
    summary="Delete collections",
    responses=answers(None),
)
async def delete_collections(
    request: Request,
    auth: AuthContext = Depends(kb_caller),
    payload: DeleteCollections = parsed(DeleteCollections),
) -> dict[str, Any]:
    """Every collection named must exist and be writable by the caller, else nothing is deleted; the
    collections (a folder with everything in it), their rows and both indexes go in one transaction."""
    ids = list(dict.fromkeys(payload.collectionIds or ([payload.id] if payload.id else [])))
    if not ids:
        raise ApiError(400, "missingParams", "collectionIds: is required (a list of collection ids), or id")
    for collection_id in ids:
        await load_collection(request, auth, collection_id, "write")
    await knowledge_bases(request).collections.delete(auth.team_id, ids)  # folders: with their contents
    return envelope(None)
