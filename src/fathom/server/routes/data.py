"""Data rows (chunks) over FastGPT's paths: push, list, detail, update, delete."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request

from fathom.datasets.ingest import PushRow
from fathom.knowledge.chunk_settings import split_chunk_indexes
from fathom.llm import count_tokens
from fathom.server.auth import AuthContext, authenticate
from fathom.server.errors import ApiError, envelope, not_found
from fathom.server.pagination import page_window
from fathom.server.permissions import Need, require_team_key
from fathom.server.routes.collections import load_collection
from fathom.server.routes.common import ANY_METHOD, iso, object_id, params, platform_of
from fathom.store.protocols import ChunkRow, NotFound

router = APIRouter(tags=["data"])

PUSH_MAX = 200
MAX_CUSTOM_INDEXES = 5


def data_view(row: ChunkRow, team_id: str) -> dict[str, Any]:
    return {
        "_id": row.id,
        "id": row.id,
        "teamId": team_id,
        "datasetId": row.dataset_id,
        "collectionId": row.collection_id,
        "q": row.q,
        "a": row.a,
        "chunkIndex": row.chunk_index,
        "indexes": row.indexes,
        "sourceName": row.source_name,
        "sourceId": row.collection_id,
        "updateTime": iso(row.updated_at),
    }


def _custom_indexes(custom: Any) -> tuple[str, ...]:
    """Up to 5 custom index texts (entries typed ``default`` are regenerated from q and a)."""
    if custom is None:
        return ()
    if not isinstance(custom, list):
        raise ApiError(400, "invalidParams", "indexes: must be a list of {text, type?}")
    extra = []
    for entry in custom:
        text = entry.get("text") if isinstance(entry, dict) else None
        if not isinstance(text, str) or not text.strip():
            raise ApiError(400, "invalidParams", "indexes[].text: must be a non-empty string")
        if entry.get("type", "custom") != "default":
            extra.append(text)
    if len(extra) > MAX_CUSTOM_INDEXES:
        raise ApiError(400, "invalidParams", f"indexes: at most {MAX_CUSTOM_INDEXES} custom indexes per row")
    return tuple(extra)


@router.api_route("/api/core/dataset/data/pushData", methods=ANY_METHOD, summary="Add rows to a collection")
async def push_data(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    values = await params(request)
    items = values.get("data")
    if not values.get("collectionId") or not isinstance(items, list) or not items:
        raise ApiError(400, "", "collectionId or data is empty")
    if len(items) > PUSH_MAX:
        raise ApiError(400, "", f"Data is too long, max {PUSH_MAX}")
    collection = await load_collection(request, auth, object_id(values, "collectionId"), "write")
    rows: list[PushRow] = []
    for position, item in enumerate(items):
        if not isinstance(item, dict):
            raise ApiError(400, "invalidParams", f"data[{position}]: must be an object with q (and a)")
        q, a = str(item.get("q") or "").strip(), str(item.get("a") or "").strip()
        if q:  # FastGPT drops rows with an empty q
            rows.append(PushRow(q, a, _custom_indexes(item.get("indexes"))))
    ready = await platform_of(request).ingestion.push_rows(collection, rows)
    return envelope({"insertLen": len(ready), "overToken": [], "repeat": [], "error": []})


@router.api_route("/api/core/dataset/data/insertData", methods=ANY_METHOD, summary="Add one row at once")
async def insert_data(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    """FastGPT's ``{collectionId, q, a?, indexes?}``: the row is embedded and stored before the answer,
    whose ``data`` is the new row's id."""
    values = await params(request)
    q = str(values.get("q") or "").strip()
    if not q:
        raise ApiError(400, "", "q is required")
    if not values.get("collectionId"):
        raise ApiError(400, "", "collectionId is required")
    collection = await load_collection(request, auth, object_id(values, "collectionId"), "write")
    row = PushRow(q, str(values.get("a") or "").strip(), _custom_indexes(values.get("indexes")))
    ids = await platform_of(request).ingestion.push_rows(collection, [row])
    return envelope(ids[0])


@router.api_route("/api/core/dataset/data/v2/list", methods=ANY_METHOD, summary="List a collection's rows")
@router.api_route("/api/core/dataset/data/list", methods=ANY_METHOD, include_in_schema=False)
async def list_data(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    values = await params(request)
    collection = await load_collection(request, auth, object_id(values, "collectionId"), "read")
    offset, size = page_window(values, dict(request.query_params))
    rows, total = await platform_of(request).chunks.list_chunks(
        auth.team_id, collection.id, offset=offset, limit=size, search=str(values.get("searchText") or "")
    )
    return envelope({"list": [data_view(row, auth.team_id) for row in rows], "total": total})


async def _load_row(request: Request, auth: AuthContext, data_id: str, need: Need) -> ChunkRow:
    """The row if the caller may ``need`` its knowledge base; a row of another team is answered exactly
    as a row that does not exist (its collection's id is never named)."""
    require_team_key(auth, "use knowledge bases", "dataset")
    missing = not_found("data", f"data {data_id} not found")
    row = (await platform_of(request).chunks.get_many([data_id])).get(data_id)
    if row is None:
        raise missing
    try:
        collection = await platform_of(request).datasets.get_collection(auth.team_id, row.collection_id)
    except NotFound:
        raise missing from None
    await load_collection(request, auth, collection.id, need)  # app keys and permission
    return row


@router.api_route("/api/core/dataset/data/detail", methods=ANY_METHOD, summary="A row")
async def data_detail(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    values = await params(request)
    row = await _load_row(request, auth, object_id(values, "id", "data"), "read")
    return envelope(data_view(row, auth.team_id))


@router.api_route("/api/core/dataset/data/update", methods=ANY_METHOD, summary="Edit a row (re-embeds it)")
async def update_data(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    values = await params(request)
    row = await _load_row(request, auth, object_id(values, "dataId"), "write")
    if not values.get("q") and not values.get("a") and not values.get("indexes"):
        return envelope(None)
    q = str(values.get("q") or row.q)
    a = str(values.get("a") if values.get("a") is not None else row.a)
    platform = platform_of(request)
    dataset = await platform.datasets.get_dataset(auth.team_id, row.dataset_id)
    settings = platform.embedders.chunk_settings(dataset.vector_model)
    texts = (split_chunk_indexes(q, a, settings) or [q]) + list(_custom_indexes(values.get("indexes")))
    embedder = platform.embedders.get(dataset.vector_model)
    vectors = await embedder.embed(texts)
    await platform.chunks.update_chunk(
        auth.team_id,
        row.id,
        q=q,
        a=a,
        index_texts=texts,
        vectors=vectors,
        model=embedder.model_id,
        tokens=count_tokens(q + a),
    )
    return envelope(None)


@router.api_route("/api/core/dataset/data/delete", methods=ANY_METHOD, summary="Delete a row")
async def delete_data(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    values = await params(request)
    row = await _load_row(request, auth, object_id(values, "id", "data"), "write")
    await platform_of(request).chunks.delete_chunk(auth.team_id, row.id)
    return envelope("success")
