"""Collections over FastGPT's paths: create from text / link / file, list with ingestion status, detail,
delete, and retrying a failed ingestion."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, File, Form, Request, UploadFile

from fathom.server.auth import AuthContext, authenticate
from fathom.server.errors import ApiError, envelope
from fathom.server.json_body import check_storable, parse_json
from fathom.server.pagination import page_window
from fathom.server.permissions import Need, permission_view, require_team_key
from fathom.server.routes.common import (
    ANY_METHOD,
    check_length,
    iso,
    object_id,
    params,
    platform_of,
    required,
)
from fathom.server.routes.datasets import load_dataset
from fathom.store.protocols import CollectionRecord

router = APIRouter(tags=["collections"])

TRAINING_TYPES = ("chunk", "qa", "auto")
_CHUNK_FIELDS = (
    "chunkSettingMode",
    "chunkSplitMode",
    "chunkSize",
    "indexSize",
    "chunkSplitter",
    "chunkOverlapRatio",
    "qaPairs",
)
MAX_OVERLAP_RATIO = 0.4
NAME_MAX = 500  # a collection's name (a link's name is the link, cut to this length)


def chunk_settings_of(values: dict[str, Any]) -> dict[str, Any]:
    """The collection's chunk settings from the request (FastGPT's names; ``chunkOverlapRatio`` and
    ``qaPairs`` are Fathom's); ``chunkSettingMode: "auto"`` keeps only ``qaPairs``."""
    settings = {field: values[field] for field in _CHUNK_FIELDS if values.get(field) not in (None, "")}
    qa_pairs = settings.pop("qaPairs", False)
    if not isinstance(qa_pairs, bool):
        raise ApiError(400, "invalidParams", "qaPairs: must be true or false")
    if settings.get("chunkSettingMode") == "auto":
        return {"qaPairs": True} if qa_pairs else {}
    if qa_pairs:
        settings["qaPairs"] = True
    if "chunkOverlapRatio" in settings:
        ratio = settings["chunkOverlapRatio"]
        if (
            isinstance(ratio, bool)
            or not isinstance(ratio, int | float)
            or not 0 <= ratio <= MAX_OVERLAP_RATIO
        ):
            raise ApiError(
                400, "invalidParams", f"chunkOverlapRatio: must be a number between 0 and {MAX_OVERLAP_RATIO}"
            )
        settings["chunkOverlapRatio"] = float(ratio)
    splitter = settings.get("chunkSplitter")
    if splitter is not None and not isinstance(splitter, str):
        raise ApiError(400, "invalidParams", "chunkSplitter: must be a string")
    for field in ("chunkSize", "indexSize"):
        if field in settings:
            try:
                settings[field] = int(settings[field])
            except (TypeError, ValueError):
                raise ApiError(400, "invalidParams", f"{field}: must be a whole number") from None
            if not 64 <= settings[field] <= 30000:
                raise ApiError(400, "invalidParams", f"{field}: must be between 64 and 30000")
    return settings


def training_amount(collection: CollectionRecord) -> int:
    """FastGPT's ``trainingAmount``: queue entries still attached (0 means ready)."""
    if collection.status == "ready":
        return 0
    if collection.status == "indexing":
        return max(collection.chunks_total - collection.chunks_done, 1)
    return 1


def collection_view(collection: CollectionRecord, queue_position: int | None = None) -> dict[str, Any]:
    return {
        "_id": collection.id,
        "parentId": None,
        "datasetId": collection.dataset_id,
        "teamId": collection.team_id,
        "name": collection.name,
        "type": collection.type,
        "forbid": False,
        "createTime": iso(collection.created_at),
        "updateTime": iso(collection.updated_at),
        "trainingType": collection.training_type,
        "fileId": collection.file_id,
        "rawLink": collection.raw_link,
        "tags": [],
        "metadata": collection.metadata,
        "sourceName": collection.name,
        "sourceId": collection.file_id or collection.raw_link or collection.id,
        "dataAmount": collection.chunks_done,
        "trainingAmount": training_amount(collection),
        "hasError": collection.status == "error",
        # Fathom's ingestion state, beyond FastGPT's fields
        "status": collection.status,
        "errorMsg": collection.error,
        "chunksTotal": collection.chunks_total,
        "chunksDone": collection.chunks_done,
        # place of its queued ingestion job in the fair queue (1: next); null when not queued
        "queuePosition": queue_position,
    }


def owned_view(
    collection: CollectionRecord, auth: AuthContext, owner: str | None, queue_position: int | None = None
) -> dict[str, Any]:
    """:func:`collection_view` plus FastGPT's ``tmbId`` and ``permission`` (both the knowledge base's:
    a collection inherits its dataset's permission) and ``externalFileId`` (Fathom has no external files)."""
    return {
        **collection_view(collection, queue_position),
        "tmbId": owner,
        "permission": permission_view(auth, owner),
        "externalFileId": None,
    }


async def load_collection(
    request: Request, auth: AuthContext, collection_id: str, need: Need
) -> CollectionRecord:
    collection, _ = await load_owned_collection(request, auth, collection_id, need)
    return collection


async def load_owned_collection(
    request: Request, auth: AuthContext, collection_id: str, need: Need
) -> tuple[CollectionRecord, str | None]:
    """The collection if the caller may ``need`` its knowledge base, and that knowledge base's owner."""
    require_team_key(auth, "use knowledge bases", "dataset")
    collection = await platform_of(request).datasets.get_collection(auth.team_id, collection_id)
    _, owner = await load_dataset(request, auth, collection.dataset_id, need)
    return collection, owner


async def _create(
    request: Request, auth: AuthContext, values: dict[str, Any], *, name: str, type: str, **source: Any
) -> dict[str, Any]:
    """Store the collection and queue its ingestion; ``insertLen`` is the number of chunks queued
    when the text is at hand (a text import), else 0 (a link or file is parsed by the job)."""
    platform = platform_of(request)
    _reject_folders(values)
    dataset, _ = await load_dataset(request, auth, object_id(values, "datasetId"), "write")
    training_type = values.get("trainingType") or "chunk"
    if training_type not in TRAINING_TYPES:
        raise ApiError(
            400, "invalidParams", f"trainingType: {training_type!r} is not one of {', '.join(TRAINING_TYPES)}"
        )
    metadata = values.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise ApiError(400, "invalidParams", "metadata: must be an object")
    collection = await platform.datasets.create_collection(
        auth.team_id,
        dataset.id,
        name,
        type=type,
        training_type="chunk" if training_type == "auto" else training_type,
        chunk_settings=chunk_settings_of(values),
        metadata=metadata,
        **source,
    )
    raw_text = source.get("raw_text")
    insert_len = await platform.ingestion.count_chunks(collection, raw_text) if raw_text else 0
    await platform.ingestion.enqueue(collection)
    return envelope(
        {
            "collectionId": collection.id,
            "results": {"insertLen": insert_len, "overToken": [], "repeat": [], "error": []},
        }
    )


def _reject_folders(values: dict[str, Any]) -> None:
    if values.get("parentId") not in (None, ""):
        raise ApiError(400, "invalidParams", "parentId: collection folders are not supported; leave it out")


@router.api_route(
    "/api/core/dataset/collection/create",
    methods=ANY_METHOD,
    summary="Create an empty collection (rows come from pushData / insertData)",
)
async def create_empty(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    """FastGPT's ``{datasetId, name, type: "virtual", metadata?}`` → the new collection's id. The
    collection is ready at once and holds the rows pushed into it."""
    values = await params(request)
    name = str(required(values, "name"))
    check_length(values, "name", NAME_MAX)
    kind = values.get("type") or "virtual"
    if kind != "virtual":
        raise ApiError(
            400, "invalidParams", f"type: {kind!r} is not supported; use 'virtual' (no collection folders)"
        )
    _reject_folders(values)
    metadata = values.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise ApiError(400, "invalidParams", "metadata: must be an object")
    platform = platform_of(request)
    dataset, _ = await load_dataset(request, auth, object_id(values, "datasetId"), "write")
    collection = await platform.datasets.create_collection(
        auth.team_id, dataset.id, name, type="virtual", metadata=metadata
    )
    await platform.datasets.set_collection_state(collection.id, "ready")
    return envelope(collection.id)


@router.api_route("/api/core/dataset/collection/create/text", methods=ANY_METHOD, summary="Import text")
async def create_text(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    values = await params(request)
    name = str(required(values, "name"))
    check_length(values, "name", NAME_MAX)
    text = values.get("text")
    if not isinstance(text, str) or not text.strip():
        raise ApiError(400, "missingParams", "text: is required and must not be empty")
    return await _create(request, auth, values, name=name, type="virtual", raw_text=text)


@router.api_route("/api/core/dataset/collection/create/link", methods=ANY_METHOD, summary="Import a web page")
async def create_link(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    values = await params(request)
    link = str(required(values, "link")).strip()
    if not link.startswith(("http://", "https://")):
        raise ApiError(400, "invalidParams", "link: must be an http:// or https:// URL")
    return await _create(request, auth, values, name=link[:NAME_MAX], type="link", raw_link=link)


@router.post("/api/core/dataset/collection/create/localFile", summary="Import an uploaded file (multipart)")
async def create_local_file(
    request: Request,
    file: UploadFile = File(...),
    data: str = Form("{}"),
    auth: AuthContext = Depends(authenticate),
) -> dict[str, Any]:
    values = parse_json(data or "{}", "data")
    if not isinstance(values, dict):
        raise ApiError(400, "invalidParams", "data: must be a JSON object")
    content = await file.read()
    if not content:
        raise ApiError(400, "", "file is empty")
    from fathom.knowledge.parse import SUPPORTED_FORMATS, detect_format

    name = file.filename or "upload"
    check_storable(name, "file.filename")
    check_length({"file.filename": name}, "file.filename", NAME_MAX)
    if detect_format(name) not in SUPPORTED_FORMATS:
        raise ApiError(
            400,
            "invalidParams",
            f"file: {name!r} has an unsupported type; supported: {', '.join(SUPPORTED_FORMATS)}",
        )
    dataset, _ = await load_dataset(request, auth, object_id(values, "datasetId"), "write")
    stored = await platform_of(request).files.save(
        auth.team_id,
        name,
        content,
        content_type=file.content_type or "application/octet-stream",
        member_id=auth.member_id,
    )
    return await _create(request, auth, values, name=name, type="file", file_id=stored.id)


@router.api_route("/api/core/dataset/collection/listV2", methods=ANY_METHOD, summary="List collections")
@router.api_route("/api/core/dataset/collection/list", methods=ANY_METHOD, include_in_schema=False)
async def list_collections(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    values = await params(request)
    dataset, owner = await load_dataset(request, auth, object_id(values, "datasetId"), "read")
    offset, size = page_window(values, dict(request.query_params))
    platform = platform_of(request)
    items, total = await platform.datasets.list_collections(
        auth.team_id, dataset.id, offset=offset, limit=size, search=str(values.get("searchText") or "")
    )
    waiting = any(item.status == "waiting" for item in items)
    positions = await platform.ingestion.queue_positions() if waiting else {}
    views = [owned_view(item, auth, owner, positions.get(item.id)) for item in items]
    return envelope({"list": views, "total": total})


@router.api_route("/api/core/dataset/collection/detail", methods=ANY_METHOD, summary="A collection")
async def collection_detail(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    values = await params(request)
    collection, owner = await load_owned_collection(
        request, auth, object_id(values, "id", "collection"), "read"
    )
    return envelope(owned_view(collection, auth, owner))


@router.api_route(
    "/api/core/dataset/collection/trainingDetail",
    methods=ANY_METHOD,
    summary="Ingestion progress of a collection",
)
async def training_detail(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    values = await params(request)
    collection = await load_collection(request, auth, object_id(values, "collectionId"), "read")
    modes = ("parse", "chunk", "qa", "auto", "image", "imageParse")
    counts = dict.fromkeys(modes, 0)
    training = dict(counts)
    errors = dict(counts)
    if collection.status in ("waiting", "parsing"):
        training["parse"] = 1
    elif collection.status == "indexing":
        training["chunk"] = training_amount(collection)
    elif collection.status == "error":
        errors["parse"] = 1
    return envelope(
        {
            "trainingType": collection.training_type,
            "advancedTraining": {"customPdfParse": False, "imageIndex": False, "autoIndexes": False},
            "queuedCounts": counts,
            "trainingCounts": training,
            "errorCounts": errors,
            "trainedCount": collection.chunks_done,
            "status": collection.status,
            "errorMsg": collection.error,
        }
    )


@router.api_route("/api/core/dataset/collection/delete", methods=ANY_METHOD, summary="Delete a collection")
async def delete_collection(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    values = await params(request)
    collection = await load_collection(request, auth, object_id(values, "id", "collection"), "write")
    await platform_of(request).datasets.delete_collection(auth.team_id, collection.id)
    return envelope(None)


@router.api_route(
    "/api/core/dataset/training/updateTrainingData", methods=ANY_METHOD, summary="Retry a failed ingestion"
)
async def retry_training(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    values = await params(request)
    collection = await load_collection(request, auth, object_id(values, "collectionId"), "write")
    if collection.status != "error":
        raise ApiError(
            400, "invalidParams", f"collection {collection.id} is {collection.status}; only failed ones retry"
        )
    platform = platform_of(request)
    await platform.datasets.set_collection_state(collection.id, "waiting", error=None)
    await platform.ingestion.enqueue(collection)
    return envelope(None)
