"""FastGPT's training routes: the queue of a knowledge base (``getDatasetTrainingQueue``), the chunks the
model failed on (``getTrainingError``), retrying them (``updateTrainingData``: one by ``dataId``, all of
a collection by ``collectionId``, all of a knowledge base by ``datasetId``; a failed import is retried
too), and one training item of a collection: read (``getTrainingDataDetail``) or deleted
(``deleteTrainingData``)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import Field, model_validator

from fathom.datasets.errors import InvalidDatasetRequest
from fathom.datasets.records import CollectionRecord, TrainingItemRecord
from fathom.server.auth import AuthContext
from fathom.server.errors import envelope
from fathom.server.pagination import Page
from fathom.server.permissions import Need, require_team_key
from fathom.server.routes.collections import load_collection
from fathom.server.routes.common import ANY_METHOD, iso
from fathom.server.routes.dataset_models import DatasetPageQuery
from fathom.server.routes.datasets import kb_caller, load_dataset
from fathom.server.routes.knowledge_routing import knowledge_bases
from fathom.server.typed import BLANK_IS_NONE, ApiModel, ObjectId, OptionalObjectId, Text, answers, parsed

router = APIRouter(tags=["training"])


class DatasetRef(ApiModel):
    datasetId: ObjectId


class TrainingErrors(DatasetPageQuery):
    collectionId: ObjectId


class UpdateTrainingData(ApiModel):
    """FastGPT's ``{datasetId, collectionId?, dataId?, q?, a?, chunkIndex?}``: ``dataId`` retries one
    failed chunk (``q``/``a`` replace its text first), else every failed chunk of the collection, else of
    the knowledge base."""

    datasetId: OptionalObjectId = None
    collectionId: OptionalObjectId = None
    dataId: OptionalObjectId = Field(None, description="A failed training item's _id (getTrainingError)")
    q: Annotated[Text | None, BLANK_IS_NONE] = None
    a: Text | None = None
    chunkIndex: int | None = None

    @model_validator(mode="after")
    def _scope(self) -> UpdateTrainingData:
        if not (self.datasetId or self.collectionId or self.dataId):
            raise ValueError("send dataId, collectionId or datasetId: what to retry")
        if self.dataId is None and (self.q is not None or self.a is not None):
            raise ValueError("q and a edit one chunk: send its dataId with them")
        if self.chunkIndex is not None:
            raise ValueError("chunkIndex: moving a chunk is not supported; leave chunkIndex out")
        return self


class TrainingDataRef(ApiModel):
    """FastGPT's ``{datasetId, collectionId, dataId}``: a training item of a collection."""

    datasetId: OptionalObjectId = None
    collectionId: ObjectId
    dataId: ObjectId = Field(description="A training item's _id (getTrainingError)")


class TrainingDataDetail(ApiModel):
    id_: str = Field(alias="_id")
    datasetId: str
    mode: str
    q: str
    a: str


class TrainingQueue(ApiModel):
    rebuildingCount: int
    trainingCount: int


class TrainingItemView(ApiModel):
    id_: str = Field(alias="_id")
    teamId: str
    datasetId: str
    collectionId: str
    billId: str | None
    mode: str
    q: str
    a: str
    chunkIndex: int
    prompt: str | None
    retryCount: int
    errorMsg: str | None
    lockTime: str | None


def _training_item_view(item: TrainingItemRecord) -> dict[str, Any]:
    return {
        "_id": item.id,
        "teamId": item.team_id,
        "datasetId": item.dataset_id,
        "collectionId": item.collection_id,
        "billId": item.bill_id,
        "mode": item.mode,
        "q": item.q,
        "a": item.a,
        "chunkIndex": item.chunk_index,
        "prompt": item.prompt,
        "retryCount": 0,  # the model client's own retries were spent before the error was kept
        "errorMsg": item.error,
        "lockTime": iso(item.updated_at),
    }


@router.api_route(
    "/api/core/dataset/training/getDatasetTrainingQueue",
    methods=ANY_METHOD,
    summary="How much training a knowledge base has left",
    responses=answers(TrainingQueue),
)
async def get_dataset_training_queue(
    request: Request, auth: AuthContext = Depends(kb_caller), payload: DatasetRef = parsed(DatasetRef)
) -> dict[str, Any]:
    """``trainingCount``: chunks and model training items still to write plus failed items;
    ``rebuildingCount``: index rows waiting to be embedded again after an embedding-model change."""
    dataset, _ = await load_dataset(request, auth, payload.datasetId, "read")
    training, rebuilding = await knowledge_bases(request).training.queue(auth.team_id, dataset.id)
    return envelope({"rebuildingCount": rebuilding, "trainingCount": training})


@router.api_route(
    "/api/core/dataset/training/getTrainingError",
    methods=ANY_METHOD,
    summary="The chunks of a collection the model failed on",
    responses=answers(Page[TrainingItemView]),
)
async def get_training_error(
    request: Request, auth: AuthContext = Depends(kb_caller), payload: TrainingErrors = parsed(TrainingErrors)
) -> dict[str, Any]:
    collection = await load_collection(request, auth, payload.collectionId, "read")
    offset, size = payload.window()
    items, total = await knowledge_bases(request).training.errors(
        auth.team_id, collection.id, offset=offset, limit=size
    )
    return envelope({"list": [_training_item_view(item) for item in items], "total": total})


@router.api_route(
    "/api/core/dataset/training/updateTrainingData",
    methods=ANY_METHOD,
    summary="Retry failed training (one chunk, a collection's or a knowledge base's)",
    responses=answers(None),
)
async def update_training_data(
    request: Request,
    auth: AuthContext = Depends(kb_caller),
    payload: UpdateTrainingData = parsed(UpdateTrainingData),
) -> dict[str, Any]:
    require_team_key(auth, "use knowledge bases", "dataset")
    training = knowledge_bases(request).training
    if payload.dataId is not None:
        item = await training.find_item(auth.team_id, payload.dataId)
        collection = await load_collection(request, auth, item.collection_id, "write")
        await training.retry_item(auth.team_id, item, collection, q=payload.q, a=payload.a)
    elif payload.collectionId is not None:
        collection = await load_collection(request, auth, payload.collectionId, "write")
        await training.retry_collection(auth.team_id, collection)
    else:
        dataset, _ = await load_dataset(request, auth, str(payload.datasetId), "write")
        await training.retry_dataset(auth.team_id, dataset.id)
    return envelope(None)


async def _item_collection(
    request: Request, auth: AuthContext, payload: TrainingDataRef, need: Need
) -> CollectionRecord:
    collection = await load_collection(request, auth, payload.collectionId, need)
    if payload.datasetId is not None and payload.datasetId != collection.dataset_id:
        raise InvalidDatasetRequest(
            f"datasetId: collection {collection.id} belongs to knowledge base {collection.dataset_id}, "
            f"not {payload.datasetId}; send its datasetId or leave datasetId out",
        )
    return collection


@router.api_route(
    "/api/core/dataset/training/getTrainingDataDetail",
    methods=ANY_METHOD,
    summary="One training item of a collection (null when it has none such)",
    responses=answers(TrainingDataDetail | None),
)
async def get_training_data_detail(
    request: Request,
    auth: AuthContext = Depends(kb_caller),
    payload: TrainingDataRef = parsed(TrainingDataRef),
) -> dict[str, Any]:
    """``{_id, datasetId, mode, q, a}`` of a training item (waiting for the model, or failed), or
    ``null`` as FastGPT answers when the collection has no such item (trained and gone, or deleted)."""
    collection = await _item_collection(request, auth, payload, "read")
    item = await knowledge_bases(request).training.item_in_collection(
        auth.team_id, collection, payload.dataId
    )
    if item is None:
        return envelope(None)
    return envelope(
        {"_id": item.id, "datasetId": item.dataset_id, "mode": item.mode, "q": item.q, "a": item.a}
    )


@router.api_route(
    "/api/core/dataset/training/deleteTrainingData",
    methods=ANY_METHOD,
    summary="Delete a training item of a collection, so the model never trains it",
    responses=answers(dict[str, Any]),
)
async def delete_training_data(
    request: Request,
    auth: AuthContext = Depends(kb_caller),
    payload: TrainingDataRef = parsed(TrainingDataRef),
) -> dict[str, Any]:
    """FastGPT's answer ``{}``. A waiting item no longer counts as training left, a failed one no longer
    as an error; an item the collection does not have (trained and gone, or never its) → 404."""
    collection = await _item_collection(request, auth, payload, "write")
    await knowledge_bases(request).training.delete_item(auth.team_id, collection, payload.dataId)
    return envelope({})
