"""Collections that stay current, over FastGPT's paths: the API file library (``apiDataset/list``,
``collection/create/apiCollection``), ``collection/sync``, and Fathom's knowledge-base sync and its
history (``dataset/sync``, ``dataset/syncHistory``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, Field

from fathom.datasets.records import SyncRecord
from fathom.datasets.sync import SOURCE_REFUSED, NotSyncable, SourceGone
from fathom.server.auth import AuthContext
from fathom.server.errors import ApiError, envelope
from fathom.server.routes.collections import CollectionRef, NewCollection, load_collection
from fathom.server.routes.common import ANY_METHOD, iso
from fathom.server.routes.dataset_models import CollectionCreated, CollectionName
from fathom.server.routes.datasets import kb_caller, load_dataset
from fathom.server.routes.knowledge_routing import knowledge_bases
from fathom.server.typed import BLANK_IS_NONE, ApiModel, ObjectId, answers, parsed

router = APIRouter(tags=["collections"])


class ApiFileList(ApiModel):
    datasetId: ObjectId
    parentId: Annotated[str | None, BLANK_IS_NONE] = Field(
        None, description="A folder's id (default: the root)"
    )
    searchKey: Annotated[str | None, BLANK_IS_NONE] = None


class ApiFileItem(BaseModel):
    id: str
    rawId: str
    parentId: str | None
    name: str
    type: Literal["file", "folder"] | str
    updateTime: Any = None
    createTime: Any = None
    hasChild: bool


class CreateApiCollection(NewCollection):
    apiFileId: str = Field(min_length=1, max_length=1000, examples=["doc-42"])
    name: CollectionName = Field(examples=["Handbook.md"])


class DatasetRef(ApiModel):
    datasetId: ObjectId


class SyncHistoryQuery(ApiModel):
    datasetId: ObjectId
    collectionId: Annotated[str | None, BLANK_IS_NONE] = None


class SyncView(BaseModel):
    """A sync run: what it saw, added, changed, left unchanged, deleted and failed on."""

    syncId: str
    datasetId: str
    collectionId: str | None
    trigger: Literal["create", "manual", "schedule"] | str
    status: Literal["queued", "running", "done", "failed"] | str
    seen: int = 0
    added: int = 0
    changed: int = 0
    unchanged: int = 0
    deleted: int = 0
    failed: int = 0
    failures: list[dict[str, str]] = []
    error: str | None = None
    attempts: int = 0
    createTime: str | None = None
    startTime: str | None = None
    finishTime: str | None = None


def _sync_view(sync: SyncRecord) -> dict[str, Any]:
    counts = {
        key: int(sync.counts.get(key, 0))
        for key in ("seen", "added", "changed", "unchanged", "deleted", "failed")
    }
    return {
        "syncId": sync.id,
        "datasetId": sync.dataset_id,
        "collectionId": sync.collection_id,
        "trigger": sync.trigger,
        "status": sync.status,
        **counts,
        "failures": sync.failures,
        "error": sync.error,
        "attempts": sync.attempts,
        "createTime": iso(sync.created_at),
        "startTime": iso(sync.started_at),
        "finishTime": iso(sync.finished_at),
    }


def _source_error(exc: Exception) -> ApiError:
    if isinstance(exc, SOURCE_REFUSED):
        return ApiError(400, "", str(exc))
    return ApiError(502, "", f"{type(exc).__name__}: {exc}")


@router.api_route(
    "/api/core/dataset/apiDataset/list",
    methods=ANY_METHOD,
    summary="List the files of a knowledge base's API file library (the console's file picker)",
    responses=answers(list[ApiFileItem]),
)
async def list_api_files(
    request: Request, auth: AuthContext = Depends(kb_caller), payload: ApiFileList = parsed(ApiFileList)
) -> dict[str, Any]:
    dataset, _ = await load_dataset(request, auth, payload.datasetId, "read")
    syncs = knowledge_bases(request).sources
    try:
        library = syncs.library(await syncs.source_of(dataset.id))
    except NotSyncable as exc:
        raise ApiError(400, "invalidParams", f"datasetId: {exc}") from None
    try:
        files = await library.list_files(payload.parentId, payload.searchKey or "")
    except Exception as exc:  # the library's answer, or the egress guard's refusal, named
        raise _source_error(exc) from None
    return envelope([item.view() for item in files])


@router.api_route(
    "/api/core/dataset/collection/create/apiCollection",
    methods=ANY_METHOD,
    summary="Import a file of the knowledge base's API file library",
    responses=answers(CollectionCreated, description="The new collection, its first sync queued"),
)
async def create_api_collection(
    request: Request,
    auth: AuthContext = Depends(kb_caller),
    payload: CreateApiCollection = parsed(CreateApiCollection),
) -> dict[str, Any]:
    dataset, _ = await load_dataset(request, auth, payload.datasetId, "write")
    if payload.billId is not None:
        raise ApiError(400, "invalidParams", "billId: not supported for API file collections; leave it out")
    if payload.imageIndex:
        raise ApiError(
            400,
            "invalidParams",
            "imageIndex: not supported for API file collections (a re-sync would drop the image indexes); "
            "upload the file with create/localFile and imageIndex, or leave imageIndex out",
        )
    training_type = payload.trainingType or "chunk"
    if training_type not in ("chunk", "auto"):
        raise ApiError(
            400, "invalidParams", f"trainingType: {training_type} is not supported for API files; use chunk"
        )
    try:
        collection_id, _ = await knowledge_bases(request).sources.create_api_collection(
            dataset,
            payload.apiFileId,
            payload.name,
            chunk_settings=payload.chunk_settings(),
            metadata=payload.metadata or {},
        )
    except NotSyncable as exc:
        raise ApiError(400, "invalidParams", f"datasetId: {exc}") from None
    return envelope(
        {
            "collectionId": collection_id,
            "results": {"insertLen": 0, "overToken": [], "repeat": [], "error": []},
        }
    )


@router.api_route(
    "/api/core/dataset/collection/sync",
    methods=ANY_METHOD,
    summary="Re-sync a link, website page or API file collection from its source",
    responses=answers(
        Literal["sameRaw", "success"],
        description="sameRaw: the source's text is unchanged (nothing done); success: re-chunking queued",
    ),
)
async def sync_collection(
    request: Request, auth: AuthContext = Depends(kb_caller), payload: CollectionRef = parsed(CollectionRef)
) -> dict[str, Any]:
    collection = await load_collection(request, auth, payload.collectionId, "write")
    try:
        result = await knowledge_bases(request).sources.sync_collection(collection)
    except NotSyncable as exc:
        raise ApiError(400, "invalidParams", f"collectionId: {exc}") from None
    except SourceGone as exc:
        raise ApiError(404, "", f"the collection's source is gone: {exc}") from None
    except Exception as exc:  # the library's answer, the egress guard's refusal, or a fault: named
        raise _source_error(exc) from None
    return envelope(result)


@router.api_route(
    "/api/core/dataset/sync",
    methods=ANY_METHOD,
    summary="Re-sync a whole knowledge base (a website: crawled again) as a background run",
    responses=answers(SyncView),
)
async def sync_dataset(
    request: Request, auth: AuthContext = Depends(kb_caller), payload: DatasetRef = parsed(DatasetRef)
) -> dict[str, Any]:
    dataset, _ = await load_dataset(request, auth, payload.datasetId, "write")
    try:
        sync = await knowledge_bases(request).sources.sync_dataset(dataset)
    except NotSyncable as exc:
        raise ApiError(400, "invalidParams", f"datasetId: {exc}") from None
    return envelope(_sync_view(sync))


@router.api_route(
    "/api/core/dataset/syncHistory",
    methods=ANY_METHOD,
    summary="The sync runs of a knowledge base (or one collection), newest first",
    responses=answers(list[SyncView]),
)
async def sync_history(
    request: Request,
    auth: AuthContext = Depends(kb_caller),
    payload: SyncHistoryQuery = parsed(SyncHistoryQuery),
) -> dict[str, Any]:
    dataset, _ = await load_dataset(request, auth, payload.datasetId, "read")
    runs = await knowledge_bases(request).sources.history(dataset.id, payload.collectionId)
    return envelope([_sync_view(run) for run in runs])
