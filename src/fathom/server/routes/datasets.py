"""Knowledge bases over FastGPT's paths: ``/api/core/dataset/{create,list,detail,delete,searchTest}``."""

from __future__ import annotations

import logging
import time
from typing import Any

from fastapi import APIRouter, Depends, Request

from fathom.datasets import UnknownRerankModel
from fathom.knowledge.search.query_extension import QueryExtension, extend_search_query
from fathom.knowledge.search.types import SearchDatasetDataParams
from fathom.llm.errors import ModelRequestError
from fathom.server.auth import AuthContext, authenticate
from fathom.server.errors import ApiError, envelope
from fathom.server.permissions import Need, permission_view, require_permission, require_team_key
from fathom.server.routes.common import (
    ANY_METHOD,
    check_length,
    iso,
    object_id,
    params,
    platform_of,
    required,
)
from fathom.store.protocols import DatasetRecord

router = APIRouter(tags=["datasets"])
log = logging.getLogger(__name__)

SEARCH_LIMIT_MAX = 20000
NAME_MAX = 200  # a knowledge base's name, in characters, on every backend
MODEL_ID_MAX = 200


def model_view(model_id: str) -> dict[str, Any]:
    return {"model": model_id, "name": model_id}


def dataset_view(dataset: DatasetRecord, auth: AuthContext, owner: str | None) -> dict[str, Any]:
    return {
        "_id": dataset.id,
        "parentId": None,
        "teamId": dataset.team_id,
        "tmbId": owner,
        "type": dataset.type,
        "avatar": "",
        "name": dataset.name,
        "intro": dataset.intro,
        "vectorModel": model_view(dataset.vector_model),
        "agentModel": model_view(dataset.agent_model) if dataset.agent_model else None,
        "chunkSettings": dataset.chunk_settings,
        "status": "active",
        "updateTime": iso(dataset.updated_at),
        "inheritPermission": True,
        "permission": permission_view(auth, owner),
    }


async def load_dataset(
    request: Request, auth: AuthContext, dataset_id: str, need: Need
) -> tuple[DatasetRecord, str | None]:
    """The dataset if the caller may ``need`` it; another team's dataset is not found."""
    require_team_key(auth, "use knowledge bases", "dataset")
    platform = platform_of(request)
    dataset = await platform.datasets.get_dataset(auth.team_id, dataset_id)
    owner = await platform.datasets.owner_of(dataset_id)
    await require_permission(platform, auth, "dataset", dataset_id, owner, need)
    return dataset, owner


@router.api_route("/api/core/dataset/create", methods=ANY_METHOD, summary="Create a knowledge base")
async def create_dataset(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    require_team_key(auth, "create knowledge bases", "dataset")
    values = await params(request)
    platform = platform_of(request)
    name = str(required(values, "name")).strip()
    check_length(values, "name", NAME_MAX)
    check_length(values, "agentModel", MODEL_ID_MAX)
    kind = values.get("type") or "dataset"
    if kind not in ("dataset", "folder"):
        raise ApiError(400, "invalidParams", f"type: {kind!r} is not supported; use 'dataset' or 'folder'")
    requested = values.get("vectorModel")
    if isinstance(requested, dict):  # FastGPT clients may send the model object they were shown
        requested = requested.get("model")
    vector_model = platform.embedders.resolve_model_id(str(requested or ""))
    try:
        platform.embedders.get(vector_model)
    except LookupError:
        raise ApiError(400, "", f"System not embedding model: {vector_model}") from None
    dataset = await platform.datasets.create_dataset(
        auth.team_id,
        name,
        vector_model=vector_model,
        intro=str(values.get("intro") or ""),
        agent_model=str(values.get("agentModel") or ""),
        member_id=auth.member_id,
    )
    return envelope(dataset.id)


@router.api_route("/api/core/dataset/list", methods=ANY_METHOD, summary="List knowledge bases")
async def list_datasets(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    require_team_key(auth, "list knowledge bases", "dataset")
    values = await params(request)
    platform = platform_of(request)
    search = str(values.get("searchKey") or "").lower()
    views = []
    for dataset in await platform.datasets.list_datasets(auth.team_id):
        if search and search not in dataset.name.lower() and search not in dataset.intro.lower():
            continue
        owner = await platform.datasets.owner_of(dataset.id)
        try:
            await require_permission(platform, auth, "dataset", dataset.id, owner, "read")
        except ApiError:
            continue  # datasets the caller cannot read are left out
        views.append(dataset_view(dataset, auth, owner))
    views.sort(key=lambda view: view["updateTime"] or "", reverse=True)
    return envelope(views)


@router.api_route("/api/core/dataset/detail", methods=ANY_METHOD, summary="A knowledge base")
async def dataset_detail(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    values = await params(request)
    dataset, owner = await load_dataset(request, auth, object_id(values, "id", "dataset"), "read")
    return envelope(dataset_view(dataset, auth, owner))


@router.api_route("/api/core/dataset/delete", methods=ANY_METHOD, summary="Delete a knowledge base")
async def delete_dataset(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    values = await params(request)
    dataset, _ = await load_dataset(request, auth, object_id(values, "id", "dataset"), "manage")
    await platform_of(request).datasets.delete_dataset(auth.team_id, dataset.id)
    return envelope(None)


@router.api_route("/api/core/dataset/searchTest", methods=ANY_METHOD, summary="Search a knowledge base")
async def search_test(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    values = await params(request)
    dataset, _ = await load_dataset(request, auth, object_id(values, "datasetId"), "read")
    text = str(required(values, "text"))
    try:
        limit = min(int(values.get("limit", 5000)), SEARCH_LIMIT_MAX)
        similarity = float(values.get("similarity", 0) or 0)
        embedding_weight = float(values.get("embeddingWeight", 0.5))
        rerank_weight = float(values.get("rerankWeight", 0.5))
    except (TypeError, ValueError) as exc:
        raise ApiError(400, "invalidParams", f"limit/similarity/weights must be numbers ({exc})") from None
    if not 0 <= similarity <= 1:
        raise ApiError(400, "invalidParams", "similarity: must be between 0 and 1")
    mode = values.get("searchMode") or "embedding"
    if mode not in ("embedding", "fullTextRecall", "mixedRecall"):
        mode = "embedding"
    fusion = values.get("fusion") or None  # Fathom's addition; FastGPT clients never send it
    if fusion is not None and fusion not in ("rrf", "convex"):
        raise ApiError(400, "invalidParams", "fusion: must be rrf or convex (or left out for the default)")
    rerank_model = values.get("rerankModel") or None
    if rerank_model is not None and not isinstance(rerank_model, str):
        raise ApiError(400, "invalidParams", "rerankModel: must be a model id (a string)")
    extension = await _query_extension(request, values, text, dataset.vector_model)
    search_params = SearchDatasetDataParams(
        queries=extension.queries.search_queries if extension else [text],
        reRankQuery=extension.queries.re_rank_query if extension else text,
        datasetIds=[dataset.id],
        similarity=similarity,
        limit=limit,
        searchMode=mode,
        embeddingWeight=embedding_weight,
        fusion=fusion,
        usingReRank=bool(values.get("usingReRank", False)),
        rerankWeight=rerank_weight,
        rerankModel=rerank_model,
    )
    started = time.perf_counter()
    try:
        result: Any = await platform_of(request).search.search(auth.team_id, search_params)
    except UnknownRerankModel as exc:
        raise ApiError(400, "invalidParams", str(exc)) from None
    answer: dict[str, Any] = {
        "list": [item.model_dump(mode="json", by_alias=True) for item in result.search_res],
        "cutList": [item.model_dump(mode="json", by_alias=True) for item in result.cut_res],
        "duration": f"{time.perf_counter() - started:.3f}s",
        "searchMode": result.search_mode,
        "limit": result.limit,
        "similarity": result.similarity,
        "usingReRank": result.using_re_rank,
        "usingSimilarityFilter": result.using_similarity_filter,
    }
    if extension is not None:  # FastGPT sends the model only when the extension ran
        answer["queryExtensionModel"] = extension.model_id
        answer["queries"] = extension.queries.search_queries
    return envelope(answer)


async def _query_extension(
    request: Request, values: dict[str, Any], text: str, vector_model: str
) -> QueryExtension | None:
    """``datasetSearchUsingExtensionQuery``: rewrites of ``text`` by ``datasetSearchExtensionModel`` (default:
    the default chat model), up to 3 kept by lazy greedy. A model that fails leaves the plain query."""
    if not values.get("datasetSearchUsingExtensionQuery"):
        return None
    model_id = values.get("datasetSearchExtensionModel") or ""
    background = values.get("datasetSearchExtensionBg") or ""
    if not isinstance(model_id, str) or not isinstance(background, str):
        raise ApiError(400, "invalidParams", "datasetSearchExtensionModel/Bg: must be strings")
    platform = platform_of(request)
    try:
        model = platform.chat.chat_model(model_id)
    except (LookupError, RuntimeError) as exc:
        raise ApiError(400, "invalidParams", f"datasetSearchExtensionModel: {exc}") from None
    embedder = platform.embedders.query_embedder(vector_model)
    try:
        return await extend_search_query(text, model, embedder, background=background)
    except ModelRequestError as exc:
        log.warning(
            "query extension with %s failed, searching the plain query: %s", model_id or "default", exc
        )
        return None
