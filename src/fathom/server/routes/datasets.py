"""Knowledge bases over FastGPT's paths: ``/api/core/dataset/{create,list,detail,delete,paths,searchTest}``.

Folders are knowledge bases of ``type: "folder"``: they hold knowledge bases and folders (``parentId``),
hold no collections, and pass a member's permission on to what is in them."""

from __future__ import annotations

import logging
import time
from typing import Annotated, Any, ClassVar, Literal

from fastapi import APIRouter, Depends, Request
from pydantic import Field

from fathom.datasets import UnknownRerankModel
from fathom.datasets.auto_model import AUTO_VECTOR_MODEL, choose_model
from fathom.knowledge.search.collection_filter import CollectionFilterError, parse_collection_filter
from fathom.knowledge.search.query_extension import QueryExtension, extend_search_query
from fathom.knowledge.search.types import SearchDatasetDataParams, SearchMode
from fathom.llm.errors import ModelRequestError
from fathom.server.auth import AuthContext, authenticate
from fathom.server.errors import ApiError, envelope
from fathom.server.permissions import Need, permission_view, require_permission, require_team_key
from fathom.server.routes.common import ANY_METHOD, iso, platform_of
from fathom.server.routes.dataset_models import (
    MODEL_ID_MAX,
    DatasetName,
    DatasetView,
    ModelChoice,
    NonBlank,
    SearchTestResult,
    model_id_of,
)
from fathom.server.routes.dataset_sources import SourceFields, configure_source, source_view
from fathom.server.typed import BLANK_IS_NONE, ApiModel, ObjectId, OptionalObjectId, Text, answers, parsed
from fathom.store.protocols import DatasetRecord

router = APIRouter(tags=["datasets"])
log = logging.getLogger(__name__)

SEARCH_LIMIT_MAX = 20000


class CreateDataset(SourceFields):
    name: DatasetName = Field(examples=["Support articles"])
    intro: Annotated[Text | None, BLANK_IS_NONE] = None
    type: Annotated[Literal["dataset", "folder", "apiDataset", "websiteDataset"] | None, BLANK_IS_NONE] = (
        Field(None, examples=["dataset"])
    )
    vectorModel: ModelChoice = Field(
        None,
        description='The embedding model (default: the default one); "auto": chosen by the first '
        "document's language (the multilingual local model for mostly CJK text, when installed)",
    )
    agentModel: Annotated[str | None, BLANK_IS_NONE] = Field(None, max_length=MODEL_ID_MAX)
    vlmModel: Annotated[str | None, BLANK_IS_NONE] = Field(
        None,
        max_length=MODEL_ID_MAX,
        description="The vision model (vision: true): describes images (imageIndex, image collections)",
    )
    parentId: OptionalObjectId = Field(None, description="The folder to create it in (null: the root)")
    avatar: Annotated[str | None, BLANK_IS_NONE] = Field(
        None, max_length=2000, description="Kept by FastGPT; ignored"
    )


class ListDatasets(ApiModel):
    parentId: OptionalObjectId = Field(None, description='The folder to list (null or "": the root)')
    type: Annotated[Literal["dataset", "folder"] | None, BLANK_IS_NONE] = Field(
        None, description="Only knowledge bases, or only folders"
    )
    searchKey: Annotated[str | None, BLANK_IS_NONE] = Field(
        None, description="Part of a name or intro: searches every folder (parentId is not read)"
    )


class DatasetPaths(ApiModel):
    parentId: OptionalObjectId = Field(None, description="The folder whose path is asked (null: the root)")
    sourceId: OptionalObjectId = Field(None, description="FastGPT's newer name for parentId")


class DatasetId(ApiModel):
    id_kinds: ClassVar[dict[str, str]] = {"id": "dataset"}
    id: ObjectId = Field(description="The knowledge base's id")


class SearchTest(ApiModel):
    """FastGPT's search test; ``fusion`` is Fathom's (how mixedRecall fuses its two legs)."""

    datasetId: ObjectId
    text: NonBlank = Field(examples=["When are refunds paid?"])
    limit: Annotated[int | None, BLANK_IS_NONE] = Field(None, description="Token budget (default 5000)")
    similarity: Annotated[Annotated[float, Field(ge=0, le=1)] | None, BLANK_IS_NONE] = None
    searchMode: Annotated[SearchMode | None, BLANK_IS_NONE] = Field(None, examples=["embedding"])
    embeddingWeight: Annotated[float | None, BLANK_IS_NONE] = None
    fusion: Annotated[Literal["rrf", "convex"] | None, BLANK_IS_NONE] = None
    usingReRank: Annotated[bool | None, BLANK_IS_NONE] = None
    collectionFilterMatch: Annotated[dict[str, Any] | str | None, BLANK_IS_NONE] = Field(
        None,
        description='FastGPT\'s filter: {"tags": {"$and": [...], "$or": [...]}, "createTime": {"$gte": ..., '
        '"$lte": ...}} (an object or its JSON text)',
        examples=['{"tags": {"$and": ["refunds"]}}'],
    )
    rerankModel: Annotated[str | None, BLANK_IS_NONE] = None
    rerankWeight: Annotated[float | None, BLANK_IS_NONE] = None
    datasetSearchUsingExtensionQuery: Annotated[bool | None, BLANK_IS_NONE] = None
    datasetSearchExtensionModel: Annotated[str | None, BLANK_IS_NONE] = None
    datasetSearchExtensionBg: Annotated[str | None, BLANK_IS_NONE] = None


async def kb_caller(request: Request) -> AuthContext:
    """The caller, if its key may use knowledge bases: checked before the body is validated."""
    auth = await authenticate(request)
    require_team_key(auth, "use knowledge bases", "dataset")
    return auth


def model_view(model_id: str) -> dict[str, Any]:
    return {"model": model_id, "name": model_id}


def checked_vlm_model(request: Request, model_id: str) -> str:
    """``vlmModel`` if it names a configured chat model that takes images; else a 400 saying so."""
    try:
        return platform_of(request).vision_model_id(model_id)
    except LookupError as exc:
        raise ApiError(400, "invalidParams", f"vlmModel: {exc}") from None


def dataset_view(dataset: DatasetRecord, auth: AuthContext, owner: str | None) -> dict[str, Any]:
    return {
        "_id": dataset.id,
        "parentId": dataset.parent_id,
        "teamId": dataset.team_id,
        "tmbId": owner,
        "type": dataset.type,
        "avatar": "",
        "name": dataset.name,
        "intro": dataset.intro,
        "vectorModel": model_view(dataset.vector_model),  # a folder's is the default model's (unused)
        "agentModel": model_view(dataset.agent_model) if dataset.agent_model else None,
        "vlmModel": model_view(dataset.vlm_model) if dataset.vlm_model else None,
        "chunkSettings": dataset.chunk_settings,
        # Fathom's addition: why vectorModel "auto" chose the model (pending: until the first import)
        "vectorModelAuto": (
            {"pending": dataset.auto_model_pending, "reason": dataset.auto_model_reason}
            if dataset.auto_model_reason is not None
            else None
        ),
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


async def load_folder(request: Request, auth: AuthContext, folder_id: str, need: Need) -> DatasetRecord:
    """A folder the caller may ``need``; 400 naming ``parentId`` when the id is a knowledge base."""
    folder, _ = await load_dataset(request, auth, folder_id, need)
    if folder.type != "folder":
        raise ApiError(
            400,
            "invalidParams",
            f"parentId: {folder_id} is a knowledge base, not a folder; send a folder's id",
        )
    return folder


async def load_knowledge_base(
    request: Request, auth: AuthContext, dataset_id: str, need: Need
) -> DatasetRecord:
    """A knowledge base (not a folder) the caller may ``need``: collections and searches need one."""
    dataset, _ = await load_dataset(request, auth, dataset_id, need)
    if dataset.type == "folder":
        raise ApiError(
            400,
            "invalidParams",
            f"datasetId: {dataset_id} is a folder; folders hold knowledge bases, not collections",
        )
    return dataset


@router.api_route(
    "/api/core/dataset/create",
    methods=ANY_METHOD,
    summary="Create a knowledge base",
    responses=answers(str, description="``data`` is the new knowledge base's id"),
)
async def create_dataset(
    request: Request, auth: AuthContext = Depends(kb_caller), payload: CreateDataset = parsed(CreateDataset)
) -> dict[str, Any]:
    platform = platform_of(request)
    payload.check_source(payload.type)
    intro = payload.intro or ""
    if payload.parentId:  # FastGPT: write permission on the folder it goes in
        await load_folder(request, auth, payload.parentId, "write")
    if payload.type == "folder":
        folder = await platform.datasets.create_dataset(
            auth.team_id,
            payload.name,
            vector_model=platform.embedders.default_model_id,
            intro=intro,
            member_id=auth.member_id,
            type="folder",
            parent_id=payload.parentId,
        )
        return envelope(folder.id)
    auto_reason = None
    if (
        model_id_of(payload.vectorModel) == AUTO_VECTOR_MODEL
    ):  # a guess from name and intro; the first import decides
        choice = choose_model(
            f"{payload.name}\n{intro}", platform.embedders.default_model_id, "the name and intro"
        )
        vector_model, auto_reason = choice.model, f"until the first import: {choice.reason}"
    else:
        vector_model = platform.embedders.resolve_model_id(model_id_of(payload.vectorModel))
    try:
        platform.embedders.get(vector_model)
    except LookupError:
        raise ApiError(400, "", f"System not embedding model: {vector_model}") from None
    vlm_model = checked_vlm_model(request, payload.vlmModel) if payload.vlmModel else ""
    dataset = await platform.datasets.create_dataset(
        auth.team_id,
        payload.name,
        vector_model=vector_model,
        intro=intro,
        agent_model=payload.agentModel or "",
        vlm_model=vlm_model,
        member_id=auth.member_id,
        auto_model_reason=auto_reason,
        parent_id=payload.parentId,
    )
    await configure_source(request, dataset, payload, payload.type or "dataset")
    return envelope(dataset.id)


@router.api_route(
    "/api/core/dataset/list",
    methods=ANY_METHOD,
    summary="List knowledge bases",
    responses=answers(list[DatasetView], description="The ones the caller may read, newest change first"),
)
async def list_datasets(
    request: Request, auth: AuthContext = Depends(kb_caller), payload: ListDatasets = parsed(ListDatasets)
) -> dict[str, Any]:
    platform = platform_of(request)
    search = (payload.searchKey or "").lower()
    if payload.parentId and not search:
        await load_folder(request, auth, payload.parentId, "read")
    views = []
    for dataset in await platform.datasets.list_datasets(
        auth.team_id, parent_id=payload.parentId, every_level=bool(search)
    ):
        if search and search not in dataset.name.lower() and search not in dataset.intro.lower():
            continue
        if payload.type and dataset.type != payload.type:
            continue
        owner = await platform.datasets.owner_of(dataset.id)
        try:
            await require_permission(platform, auth, "dataset", dataset.id, owner, "read")
        except ApiError:
            continue  # datasets the caller cannot read are left out
        views.append(dataset_view(dataset, auth, owner))
    views.sort(key=lambda view: view["updateTime"] or "", reverse=True)
    return envelope(views)


@router.api_route(
    "/api/core/dataset/detail", methods=ANY_METHOD, summary="A knowledge base", responses=answers(DatasetView)
)
async def dataset_detail(
    request: Request, auth: AuthContext = Depends(kb_caller), payload: DatasetId = parsed(DatasetId)
) -> dict[str, Any]:
    dataset, owner = await load_dataset(request, auth, payload.id, "read")
    return envelope({**dataset_view(dataset, auth, owner), **await source_view(request, dataset.id)})


@router.api_route(
    "/api/core/dataset/delete", methods=ANY_METHOD, summary="Delete a knowledge base", responses=answers(None)
)
async def delete_dataset(
    request: Request, auth: AuthContext = Depends(kb_caller), payload: DatasetId = parsed(DatasetId)
) -> dict[str, Any]:
    dataset, _ = await load_dataset(request, auth, payload.id, "manage")  # a folder: with what is in it
    platform = platform_of(request)
    file_ids = await platform.datasets.file_ids(auth.team_id, dataset.id)
    await platform.datasets.delete_dataset(auth.team_id, dataset.id)
    await platform.files.delete_unused(auth.team_id, file_ids)  # the team's storage quota goes down
    return envelope(None)


@router.api_route(
    "/api/core/dataset/paths",
    methods=ANY_METHOD,
    summary="The folders from the root to a folder",
    responses=answers(
        list[dict[str, str]], description="``[{parentId, parentName}]``, the root's child first"
    ),
)
async def dataset_paths(
    request: Request, auth: AuthContext = Depends(kb_caller), payload: DatasetPaths = parsed(DatasetPaths)
) -> dict[str, Any]:
    """FastGPT's breadcrumb: ``[]`` for the root."""
    folder_id = payload.parentId or payload.sourceId
    if not folder_id:
        return envelope([])
    await load_dataset(request, auth, folder_id, "read")
    chain = await platform_of(request).datasets.lineage(folder_id)
    return envelope([{"parentId": item_id, "parentName": name} for item_id, _, name in reversed(chain)])


@router.api_route(
    "/api/core/dataset/searchTest",
    methods=ANY_METHOD,
    summary="Search a knowledge base",
    responses=answers(SearchTestResult),
)
async def search_test(
    request: Request, auth: AuthContext = Depends(kb_caller), payload: SearchTest = parsed(SearchTest)
) -> dict[str, Any]:
    dataset = await load_knowledge_base(request, auth, payload.datasetId, "read")
    try:
        parse_collection_filter(payload.collectionFilterMatch)
    except CollectionFilterError as exc:
        raise ApiError(400, "invalidParams", str(exc)) from None
    text = payload.text
    limit = min(5000 if payload.limit is None else payload.limit, SEARCH_LIMIT_MAX)
    embedding_weight = 0.5 if payload.embeddingWeight is None else payload.embeddingWeight
    rerank_weight = 0.5 if payload.rerankWeight is None else payload.rerankWeight
    extension = await _query_extension(request, payload, dataset.vector_model)
    search_params = SearchDatasetDataParams(
        queries=extension.queries.search_queries if extension else [text],
        reRankQuery=extension.queries.re_rank_query if extension else text,
        datasetIds=[dataset.id],
        similarity=payload.similarity or 0,
        limit=limit,
        searchMode=payload.searchMode or "embedding",
        embeddingWeight=embedding_weight,
        fusion=payload.fusion,
        usingReRank=bool(payload.usingReRank),
        rerankWeight=rerank_weight,
        rerankModel=payload.rerankModel,
        collectionFilterMatch=payload.collectionFilterMatch,
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


async def _query_extension(request: Request, payload: SearchTest, vector_model: str) -> QueryExtension | None:
    """``datasetSearchUsingExtensionQuery``: rewrites of ``text`` by ``datasetSearchExtensionModel`` (default:
    the default chat model), up to 3 kept by lazy greedy. A model that fails leaves the plain query."""
    if not payload.datasetSearchUsingExtensionQuery:
        return None
    model_id = payload.datasetSearchExtensionModel or ""
    platform = platform_of(request)
    try:
        model = platform.chat.chat_model(model_id)
    except (LookupError, RuntimeError) as exc:
        raise ApiError(400, "invalidParams", f"datasetSearchExtensionModel: {exc}") from None
    embedder = platform.embedders.query_embedder(vector_model)
    try:
        return await extend_search_query(
            payload.text, model, embedder, background=payload.datasetSearchExtensionBg or ""
        )
    except ModelRequestError as exc:
        log.warning(
            "query extension with %s failed, searching the plain query: %s", model_id or "default", exc
        )
        return None
